"""Value a candidate ranking on a logged click log (``python -m ultr_core evaluate``, the Upload page): expected
clicks in its top k per session by every off-policy estimator, each with its 90 % interval from a bootstrap over
sessions and the rule its support follows (docs/counterfactual.md).

:func:`value_ranking` reads the log once and returns a :class:`RankingValue` that owns its JSON and its text.
"""
from __future__ import annotations

from dataclasses import dataclass

from ultr_core.errors import ConfigError, counted
from ultr_core.evaluation.intervals import interval_text

__all__ = ["RankingOptions", "RankingValue", "value_ranking", "value_ranking_job"]


@dataclass(frozen=True, kw_only=True)
class RankingOptions:
    """What to value and how (each field is the ``evaluate`` flag of the same name; errors name the flag).  Checked
    on creation."""

    ranking: str = "production"              #: production | model:KEY | scores (with ``scores``)
    scores: object | None = None             #: a scores file already read (:mod:`ultr_core.logs.scores`)
    model: str = "pbm"                       #: the direct method's click model
    k: int = 10                              #: value = expected clicks in the top k per session
    n_boot: int | None = None                #: bootstrap resamples of the sessions (None: the default)
    seed: int = 0
    judgements: object | None = None         #: editorial judgements already read: also DCG@k
    prior: str = "auto"                      #: the attractiveness prior of a model:KEY re-ranking's fit
    estimators: tuple | None = None          #: estimator keys (None: the default set for the log)
    format: str | None = None                #: the log's format (None: sniffed)
    engine: str = "duckdb"                   #: what reads the log's sessions: duckdb | dask
    scheduler: str | None = None             #: a Dask scheduler (tcp://host:port) for engine dask; None: threads
    memory_limit: str = "2GB"                #: DuckDB's budget while it reads the log (larger work spills to disk)

    def __post_init__(self):
        from ultr_core.counterfactual.choices import DIRECT_MODELS
        if self.prior != "auto" and not self.ranking.startswith("model:"):
            raise ConfigError("--prior", "applies to --ranking model:KEY (the prior of the model that re-ranks)")
        if self.model not in DIRECT_MODELS:
            raise ConfigError("--model", f"the direct method needs one of {', '.join(DIRECT_MODELS)}, "
                                         f"got {self.model!r}")
        if not isinstance(self.k, int) or self.k < 1:
            raise ConfigError("--k", f"must be a whole number ≥ 1, got {self.k!r}")
        if self.n_boot is not None and not 20 <= self.n_boot <= 10_000:
            raise ConfigError("--n-boot", f"must lie in 20 … 10000, got {self.n_boot!r}")
        from ultr_core.logs.engines import check_engine
        from ultr_core.logs.sql import check_memory_limit
        check_engine(self.engine, self.scheduler)
        check_memory_limit(self.memory_limit)


@dataclass(frozen=True)
class RankingValue:
    """The result of :func:`value_ranking`: its ``report`` (:class:`~ultr_core.counterfactual.records.RankingReport`:
    the log, the candidate, the log's own value, one entry per estimator with its interval and support, the logging
    propensities, DCG@k with judgements)."""

    report: object

    def to_json(self) -> str:
        """The report as strict JSON (NaN and ±Infinity as null): the CLI's ``--json``."""
        from ultr_core.logs.outputs import json_text
        return json_text(self.report)

    def lines(self) -> list[str]:
        """The report as the CLI prints it."""
        return result_lines(self.report)


def value_ranking(source, options: RankingOptions | None = None, *, name: str | None = None,
                  report=None) -> RankingValue:
    """The value of ``options``' candidate on ``source`` (a path or a glob, read out of core into sessions, or a
    click table already read); ``report(done, total)`` follows the bootstrap."""
    from ultr_core.counterfactual.choices import N_BOOT
    from ultr_core.counterfactual.evaluate import evaluate_ranking
    o = options or RankingOptions()
    label = name if name is not None else (source if isinstance(source, str) else "log")
    if isinstance(source, str):
        from ultr_core.clickmodels.outofcore import read_sessions
        source = read_sessions(source, o.format, label, engine=o.engine, scheduler=o.scheduler,
                               memory_limit=o.memory_limit)
    out = evaluate_ranking(source, label, ranking="scores" if o.scores is not None else o.ranking, scores=o.scores,
                           model=o.model, k=o.k, n_boot=N_BOOT if o.n_boot is None else o.n_boot, seed=o.seed,
                           judgements=o.judgements, report=report,
                           prior=o.prior, estimators=list(o.estimators) if o.estimators is not None else None)
    return RankingValue(out)


def value_ranking_job(frame, name: str, ranking: str, *, scores: bytes | None, model: str, k: int, judgements,
                      prior: str = "auto", estimators=None, report=None, stop=None):
    """:func:`value_ranking` as a job of the app's pool (:mod:`ultr_core.app.jobpool`): the scores file as bytes,
    read here; ``judgements`` parsed by the page (or bytes, or None; judgements that cannot be read only leave DCG@k
    out); a ``{"done", "total"}`` record every 10 resamples.  The report."""
    from ultr_core.errors import DataFormatError
    from ultr_core.logs.judgements import read_judgements
    from ultr_core.logs.scores import read_scores
    sc = read_scores(scores, "scores file") if scores is not None else None
    try:
        jd = read_judgements(judgements, name="judgements") if isinstance(judgements, bytes) else judgements
    except DataFormatError:
        jd = None
    opts = RankingOptions(ranking=ranking, scores=sc, model=model, k=int(k), judgements=jd,
                          prior=prior if ranking.startswith("model:") else "auto",   # used to re-rank only
                          estimators=tuple(estimators) if estimators is not None else None)
    progress = (lambda d, n: report({"done": d, "total": n})) if report is not None else None
    return value_ranking(frame, opts, name=name, report=progress).report


def _cell(x) -> str:
    return interval_text(x)


def result_lines(out) -> list[str]:
    """The text report of a :class:`~ultr_core.counterfactual.records.RankingReport`: the log, the candidate's notes,
    the log's own value, one line per estimator, support."""
    k = out.k
    lines = [f"{out.log}: {out.sessions:,} sessions, {out.queries:,} queries; candidate: "
             f"{out.candidate.label}; value = expected clicks in the top {k} per session "
             f"({out.level:.0%} intervals, {out.n_boot} bootstrap resamples of the sessions)"]
    lines += [f"note: {n}" for n in out.all_notes]
    lines.append(f"{'logged (observed)':<18} {_cell(out.logged)}")
    for e in out.estimators.values():
        support = f"support {e.support:.0%} ({e.support_kind})"
        value = f"refused: {e.refused}" if e.estimate is None else f"{_cell(e):<30} {support}"
        said = e.note and e.lower is not None               # without bounds the value's text gives the note already
        lines.append(f"{e.label:<18} {value}" + (f"\n{'':<18} note: {e.note}" if said else ""))
    s = out.support
    lines.append(f"support: {s.identified:.0%} of the top-{k} slots identified, {s.at_position:.0%} shown at "
                 f"their position, {s.examined:.1%} hold documents with ≥ 10 examination-weighted impressions; "
                 f"the log's positions form {counted(out.position_bias.components, 'component')}")
    from ultr_core.counterfactual.estimators import ESTIMATOR_BY_KEY
    if any(ESTIMATOR_BY_KEY[key].reads_propensity for key in out.estimators):
        lines.append(f"logging propensities (DR, policy-aware IPS): {out.logging_propensities.text}")
    if out.judged is not None:
        j = out.judged
        lines.append(j.get("note") or f"judged: DCG@{k} {_cell(j[f'dcg@{k}'])} (production order "
                                      f"{_cell(j[f'logged_dcg@{k}'])}); {j['judged_share']:.0%} of the top-{k} "
                                      "slots judged, unjudged count 0")
    return lines
