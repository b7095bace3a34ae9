"""Check a log: can its relevance be recovered, and how surely (``python -m ultr_core ig``, the Upload page).

:func:`check_log` reads the log once (:func:`~ultr_core.logs.ingestion.ingest`, out of core), builds the
identifiability graph once and analyses it (:func:`~ultr_core.identifiability.reports.analyse_identifiability`:
components, repairs, the observation curves with their intervals, practical identifiability); the
:class:`LogCheck` it returns computes what is asked on top — relevance per document, a profile interval, a certainty
plan, agreement with judgements — from one converged PBM fit (:attr:`LogCheck.uncertainty`).

>>> import pandas as pd
>>> log = pd.DataFrame({"query_id": 1, "doc_id": [1, 2, 1, 2], "position": [1, 2, 2, 1], "click": [1, 0, 0, 1],
...                     "session_id": [1, 1, 2, 2]})
>>> check = check_log(log.to_csv(index=False).encode(), CheckOptions(estimate=None), name="log.csv")
>>> check.report.identifiable, check.report.n_components
(True, 1)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import pandas as pd

from ultr_core.errors import ConfigError

__all__ = ["CheckOptions", "LogCheck", "check_log"]

#: ``--objective`` values of a certainty plan
OBJECTIVES = ("worst", "mean")


@dataclass(frozen=True, kw_only=True)
class CheckOptions:
    """What to check (each field is the ``ig`` flag of the same name; errors name the flag).  Checked on creation:
    options that do nothing alone, or cannot run, are refused before any log is read."""

    bias: tuple = ("position",)              #: bias-factor columns
    format: str | None = None                #: file format (None: from the extension or the content)
    columns: tuple = ()                      #: (file column, name) pairs that map a file's columns
    document: str = "auto"                   #: auto | query | global
    doc_columns: tuple | None = None         #: feature columns that identify a document instead
    engine: str = "duckdb"
    scheduler: str | None = None
    memory_limit: str | None = "2GB"
    merge: bool = False
    intervene: bool = False
    estimate: str | None = "all_pairs"       #: the observation-curve estimator (None: no curve)
    bootstrap: int | None = None             #: document-bootstrap resamples (None: 100)
    seed: int = 0
    users: str | None = None                 #: the user model the verdict is read for (None: the table's first)
    profile: str | None = None               #: a factor label for a profile-likelihood interval
    certainty: int | None = None             #: swaps to plan for certainty (1–100)
    swap_impressions: int | None = None      #: impressions per planned swap (None: 100)
    objective: str | None = None             #: worst | mean (None: worst)
    max_pairs: int | None = field(default=None, repr=False)   #: a shared server's budget of (document, factor) pairs

    def __post_init__(self):
        if not self.bias or any(not isinstance(b, str) or not b for b in self.bias):
            raise ConfigError("--bias", "name at least one bias-factor column (e.g. position)")
        from ultr_core.logs.engines import check_engine
        check_engine(self.engine, self.scheduler)
        if self.bootstrap is not None and self.estimate is None:
            raise ConfigError("--bootstrap", "applies to an estimate; --estimate none computes no interval")
        if self.certainty is None:
            for opt, value in (("--swap-impressions", self.swap_impressions), ("--objective", self.objective)):
                if value is not None:
                    raise ConfigError(opt, "applies to --certainty N; add it or leave this option out")
        elif not 1 <= self.certainty <= 100:
            raise ConfigError("--certainty", f"must be a whole number of swaps from 1 to 100, got {self.certainty}")
        if self.swap_impressions is not None and not 1 <= self.swap_impressions <= 10 ** 9:
            raise ConfigError("--swap-impressions",
                              f"must be a whole number from 1 to 10⁹, got {self.swap_impressions}")
        if self.objective is not None and self.objective not in OBJECTIVES:
            raise ConfigError("--objective", f"use one of {', '.join(OBJECTIVES)}, got {self.objective!r}")
        if self.users is not None:
            from ultr_core.clickmodels.registry import USER_MODELS
            if self.users not in USER_MODELS:
                raise ConfigError("--users", f"use one of {', '.join(USER_MODELS)}, got {self.users!r}")

    @property
    def n_bootstrap(self) -> int:
        return 100 if self.bootstrap is None else self.bootstrap


@dataclass(frozen=True)
class LogCheck:
    """The result of :func:`check_log`: the analysis (graph, report, repair plans), the reader's notes and, on
    first use, one converged PBM fit with every factor's standard error that the optional parts share."""

    analysis: object                         #: :class:`~ultr_core.identifiability.reports.IdentifiabilityAnalysis`
    options: CheckOptions
    source: str
    notes: tuple = ()                        #: what reading the log dropped or repaired, counted
    log: object = None                       #: the kept click log when one was analysed: its file ids name documents

    @property
    def graph(self):
        return self.analysis.graph

    @cached_property
    def uncertainty(self):
        """The converged PBM fit and every factor's standard error (:func:`~.precision.graph_uncertainty`)."""
        from ultr_core.identifiability.precision import graph_uncertainty
        return graph_uncertainty(self.graph)

    @cached_property
    def report(self):
        """The :class:`~ultr_core.identifiability.records.IdentifiabilityReport`: the analysis's, with the log's notes
        and source, the users' reading and, where the options ask, the profile interval and the certainty plan."""
        from ultr_core.clickmodels.registry import DEFAULT_USER_MODEL
        from ultr_core.identifiability.users import users_report
        o = self.options
        rep = self.analysis.report.with_(notes=tuple(self.notes), source=self.source,
                                         users=users_report(self.graph, o.users or DEFAULT_USER_MODEL))
        if o.profile:
            from ultr_core.identifiability.precision import profile_report
            rep = rep.with_(profile=profile_report(self.graph, o.profile, self.uncertainty))
        if o.certainty:
            from ultr_core.identifiability.precision import certainty_report
            rep = rep.with_(certainty_plan=certainty_report(self.graph, steps=o.certainty,
                                                            impressions=o.swap_impressions or 100,
                                                            objective=o.objective or "worst", u=self.uncertainty,
                                                            log=self.log))
        return rep

    @cached_property
    def documents(self) -> pd.DataFrame:
        """Relevance per document with its 90 % interval, component and status (``ig --documents``)."""
        from ultr_core.identifiability.precision import document_context, documents_frame
        return documents_frame(self.graph, self.uncertainty, document_context(self.graph, self.log)[1])

    def judge(self, judgements):
        """The relevance per (query, document) scored against editorial ``judgements`` (``ig --judgements``)."""
        from ultr_core.identifiability.judgement_agreement import ig_judgements
        return ig_judgements(self.documents, judgements, seed=self.options.seed)

    def to_json(self, report=None) -> str:
        """The report (or ``report``, one made from it) as strict JSON (NaN and ±Infinity as null): the CLI's
        ``--json`` and the pages' download."""
        from ultr_core.logs.outputs import json_text
        return json_text(self.report if report is None else report)

    def text(self, report=None) -> str:
        """The report (or ``report``) as the CLI prints it (notes first)."""
        from ultr_core.identifiability.reports import ig_text
        return "\n".join([*(f"note: {n}" for n in self.notes), ig_text(self.report if report is None else report)])


def check_log(source, options: CheckOptions | None = None, *, name: str | None = None, budget=None) -> LogCheck:
    """Read ``source`` (a path, a glob, an ULTRA folder or an upload's bytes) once and analyse it under ``options``
    (default: :class:`CheckOptions`'s, the CLI's ``ig FILE`` with no flag).  A log already read — a kept
    :class:`~ultr_core.logs.clicklog.ClickLog` or a :class:`~ultr_core.logs.ingestion.CountTable` (the pages) — is
    analysed as it is; ``budget`` (:class:`~ultr_core.identifiability.pairs.Budget`) bounds the estimation in a
    shared server."""
    from ultr_core.identifiability.reports import analyse_identifiability
    from ultr_core.logs.clicklog import ClickLog
    from ultr_core.logs.ingestion import CountTable, ingest
    o = options or CheckOptions()
    if isinstance(source, (ClickLog, CountTable)):
        subject, notes = source, tuple(getattr(source, "notes", ()))
    else:
        subject = ingest(source, o.format, bias=list(o.bias), columns=dict(o.columns) or None, document=o.document,
                         doc_columns=list(o.doc_columns) if o.doc_columns else None, engine=o.engine,
                         scheduler=o.scheduler, memory_limit=o.memory_limit, name=name, max_pairs=o.max_pairs)
        notes = tuple(subject.notes)
    analysis = analyse_identifiability(subject, list(o.bias), merge=o.merge, intervene=o.intervene, seed=o.seed,
                                       estimate=o.estimate, n_bootstrap=o.n_bootstrap, budget=budget)
    label = name if name is not None else (source if isinstance(source, str) else "upload")
    return LogCheck(analysis, o, str(label), notes, source if isinstance(source, ClickLog) else None)
