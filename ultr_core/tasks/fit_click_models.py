"""Fit and compare click models on a log (``python -m ultr_core click-models``): every model fitted on the training
sessions and scored on held-out ones, the best fit with its paired interval, and — with judgements — each model's
relevance scored against the judges.

:func:`fit_click_models` reads the log once — grouped into its distinct (result list, click pattern) rows by DuckDB,
or two logs' sessions with ``test`` — and returns a :class:`ClickModelFit` that owns its JSON and its text.

>>> import os, tempfile, pandas as pd
>>> path = os.path.join(tempfile.mkdtemp(), "log.csv")
>>> pd.DataFrame({"session_id": [1, 1, 2, 2, 3, 3, 4, 4], "query_id": 7, "doc_id": ["a", "b", "b", "a"] * 2,
...               "position": [1, 2] * 4, "click": [1, 0, 0, 1, 1, 1, 0, 0]}).to_csv(path, index=False)
>>> fit = fit_click_models(path, ClickModelOptions(models=("pbm", "dctr")))
>>> sorted(fit.report.models), fit.report.train_sessions + fit.report.test_sessions
(['dctr', 'pbm'], 4)
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ultr_core.errors import ConfigError

__all__ = ["ClickModelOptions", "ClickModelFit", "fit_click_models", "click_models_job"]


@dataclass(frozen=True, kw_only=True)
class ClickModelOptions:
    """What to fit (each field is the ``click-models`` flag of the same name; errors name the flag).  Checked on
    creation: options that do not apply are refused, not ignored."""

    models: tuple | None = None              #: click-model keys (None: every model of the table)
    format: str | None = None                #: the log's format (None: sniffed)
    split: float | None = None               #: the training share of the sessions (None: 0.75)
    test: str | None = None                  #: a second log to score on instead of a split
    test_format: str | None = None
    identifiability: bool = False            #: each model's Fisher information: rank, unidentified and weak parameters
    judgements: object | None = None         #: editorial judgements already read (:mod:`ultr_core.logs.judgements`)
    include_prior_dominated: bool = False    #: also score the pairs the prior decides
    prior: str = "auto"                      #: the attractiveness prior: auto (each model its own) | pyclick | learned
    seed: int = 0
    memory_limit: str = "2GB"                #: the budget of a log read out of core (DuckDB's limit; patterns held)
    engine: str = "duckdb"                   #: what builds the session table: duckdb | dask
    scheduler: str | None = None             #: a Dask scheduler (tcp://host:port) for engine dask; None: threads

    def __post_init__(self):
        from ultr_core.clickmodels.compare import parse_models
        from ultr_core.clickmodels.prior import PRIORS
        from ultr_core.constraints import TRAIN_SHARE
        if self.models is not None:
            object.__setattr__(self, "models", tuple(parse_models(",".join(self.models))))
        if self.split is not None:
            TRAIN_SHARE.check(self.split, "--split")
        if self.test and self.split is not None:
            raise ConfigError("--split", "does not apply with --test (the whole log trains, --test scores)")
        if self.test_format and not self.test:
            raise ConfigError("--test-format", "applies to --test; give --test too")
        if self.prior not in PRIORS:
            raise ConfigError("--prior", f"use one of {', '.join(PRIORS)}, got {self.prior!r}")
        from ultr_core.logs.sql import check_memory_limit
        check_memory_limit(self.memory_limit)
        from ultr_core.logs.engines import check_engine
        check_engine(self.engine, self.scheduler)



@dataclass(frozen=True)
class ClickModelFit:
    """The result of :func:`fit_click_models`: the ``report``
    (:class:`~ultr_core.clickmodels.compare.ClickModelComparison`: scores, bias parameters, seconds, the best fit,
    judgements) and the log's name."""

    report: object
    source: str

    @property
    def relevance(self) -> pd.DataFrame:
        """One row per (query_id, doc_id) with each model's estimate (:attr:`report`'s)."""
        return self.report.relevance

    def to_json(self) -> str:
        """The report as strict JSON (NaN and ±Infinity as null): the CLI's ``--json``."""
        from ultr_core.logs.outputs import json_text
        return json_text(self.report)

    def lines(self) -> list[str]:
        """The report as the CLI prints it."""
        out = self.report
        lines = [f"note: {n}" for n in out.notes]
        lines.append(f"{self.source}: {out.train_sessions:,} training sessions, {out.test_sessions:,} test "
                     f"sessions ({out.dropped_test_sessions:,} test sessions of unseen queries dropped)")
        lines.append(f"{'model':<6} {'log-likelihood':>15} {'perplexity':>11} {'cond. perplexity':>17} {'seconds':>8}")
        for m in out.models.values():
            lines.append(f"{m.label:<6} {m.log_likelihood:>15.4f} {m.perplexity:>11.4f} "
                         f"{m.conditional_perplexity:>17.4f} {m.seconds:>8.2f}")
        if out.best_fit:
            lines.append(out.best_fit.sentence() + " — 90 % interval paired over the test sessions")
        learned = [f"{m.label} {m.prior.short()}" for m in out.models.values() if m.prior]
        if learned:
            lines.append("learned prior (baseline × pseudo-impressions, chosen on a held-out fifth): "
                         + ", ".join(learned))
        for m in out.models.values():
            if m.identifiability is not None:
                lines.append(m.identifiability.line(m.label))
        if out.judgements is not None:
            from ultr_core.clickmodels.judgement_agreement import judgement_lines
            lines += judgement_lines(out)
        return lines


def fit_click_models(source, options: ClickModelOptions | None = None, *, name: str | None = None, on_model=None,
                     stop=None) -> ClickModelFit:
    """Fit and score the click models of ``options`` on ``source``: a path or a glob of paths (read out of core), or
    a click table already read (the pages' kept log).  ``on_model(done, total, label)`` follows the fits; ``stop``
    (an Event) ends the comparison between two models with the models done."""
    from ultr_core.clickmodels.compare import compare_click_models, parse_models
    o = options or ClickModelOptions()
    label = name if name is not None else (source if isinstance(source, str) else "log")
    keys = list(o.models) if o.models is not None else parse_models(None)
    common = dict(judgements=o.judgements, include_prior=o.include_prior_dominated, seed=o.seed, prior=o.prior,
                  identifiability=o.identifiability, on_model=on_model, stop=stop)
    split = 0.75 if o.split is None else o.split
    if isinstance(source, pd.DataFrame):
        out = compare_click_models(source, label, models=keys, split=split, **common)
    elif o.test:
        from ultr_core.clickmodels.outofcore import read_sessions
        engine = dict(engine=o.engine, scheduler=o.scheduler, memory_limit=o.memory_limit)
        out = compare_click_models(read_sessions(source, o.format, label, **engine), label, models=keys,
                                   test=read_sessions(o.test, o.test_format, o.test, **engine), **common)
    else:                                     # grouped into patterns by DuckDB: any size within its memory limit
        from ultr_core.clickmodels.patterns import patterns_from_source
        from ultr_core.logs.sniff import resolve_source
        src = resolve_source(source, o.format, label)                  # paths, compression and format: once
        with patterns_from_source(src, src.fmt, label, split=split, memory_limit=o.memory_limit, engine=o.engine,
                                  scheduler=o.scheduler) as patterns:                    # any size: on disk
            out = compare_click_models(patterns, label, models=keys, **common)
    return ClickModelFit(out, str(label))


def click_models_job(frame: pd.DataFrame, name: str, *, prior: str = "auto", report=None, stop=None):
    """:func:`fit_click_models` of every model on a kept click table as a job of the app's pool
    (:mod:`ultr_core.app.jobpool`): a ``{"done", "total", "model"}`` record after each model; the report
    (:class:`~ultr_core.clickmodels.compare.ClickModelComparison`, its ``relevance`` table with it)."""
    fit = fit_click_models(frame, ClickModelOptions(prior=prior), name=name, stop=stop,
                           on_model=lambda d, n, m: report and report({"done": d, "total": n, "model": m}))
    return fit.report
