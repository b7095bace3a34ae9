"""``python -m ultr_core evaluate LOG --ranking SCORES.csv``: the value of a candidate ranking on the logged
traffic by every off-policy estimator, with 90 % intervals from a bootstrap over sessions (docs/counterfactual.md)."""
from __future__ import annotations

import argparse
from dataclasses import replace

from ultr_core.commands.options import HelpFormatter
from ultr_core.errors import printable

__all__ = ["add_parser", "run", "bootstrap_progress", "PROGRESS_AFTER"]

#: the largest scores file read (bytes)
MAX_SCORES_BYTES = 512 * 2**20
#: a bootstrap expected to take longer than this (seconds) says on standard error how far it is and how long is left
PROGRESS_AFTER = 10.0


def add_parser(sub) -> None:
    from ultr_core.clickmodels.prior import DEFAULT_PRIOR, PRIORS
    from ultr_core.counterfactual.choices import DIRECT_MODELS, N_BOOT, SOURCES
    from ultr_core.counterfactual.estimators import ESTIMATORS
    from ultr_core.logs.engines import add_engine_options
    from ultr_core.logs.formats import LOG_FORMATS
    p = sub.add_parser("evaluate", formatter_class=HelpFormatter,
                       help="estimate a candidate ranking's value on a click log (" + ", ".join(
                           e.label for e in ESTIMATORS) + ") with 90 %% intervals, support and the log's own value")
    p.add_argument("path", help="click log with session ids (CSV/TSV/Parquet, Yandex, PyClick, Baidu-ULTR)")
    p.add_argument("--format", choices=[f.name for f in LOG_FORMATS if f.kind != "folder"],
                   help="format of LOG (default: sniffed)")
    p.add_argument("--ranking", default="production", help="the candidate: " + "; ".join(
        f"{s.label} — {s.help}" for s in SOURCES).replace("%", "%%") + " (a file path gives a scores file)")
    p.add_argument("--model", default="pbm", choices=DIRECT_MODELS, help="the direct method's click model")
    p.add_argument("--k", type=int, default=10, help="value = expected clicks in the top k per session")
    p.add_argument("--prior", choices=PRIORS, default=DEFAULT_PRIOR, help="--ranking model:KEY: the "
                   "attractiveness prior of the model's fit (as click-models --prior)")
    p.add_argument("--estimators", default=argparse.SUPPRESS, help="comma-separated of " + ", ".join(
        f"{e.key} ({e.label})" for e in ESTIMATORS) + "; the affine ones read trust bias's b_r + s_r·a_d (a fit per "
        "resample: ≈ 0.02 s each with 500 (query, document) pairs, 0.35 s with 4,000). Default: " + ", ".join(
        e.key for e in ESTIMATORS if e.default) + ", and " + ", ".join(e.key for e in ESTIMATORS if e.with_logged)
        + " where the log has a 'propensity' column")
    p.add_argument("--n-boot", type=int, default=N_BOOT, help="bootstrap resamples of the sessions")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
    p.add_argument("--judgements", metavar="FILE", help="editorial judgements (qrels or CSV/TSV): also DCG@k of the "
                                                        "candidate and of the production order")
    p.add_argument("--grades", default="0-5", help="--judgements: the grade range LOW-HIGH")
    p.add_argument("--memory-limit", default="2GB", help="DuckDB's memory budget while it reads the log (larger "
                                                         "work spills to the temporary folder, TMPDIR)")
    add_engine_options(p, "reads the log's sessions")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(fn=run, include_prior_dominated=False)


def _scores(a):
    """The scores file named by --ranking, or None for production / model:KEY."""
    if a.ranking == "production" or a.ranking.startswith("model:"):
        return None
    from ultr_core.commands.options import file_bytes
    from ultr_core.logs.scores import read_scores
    return read_scores(file_bytes(a.ranking, "--ranking", "a scores file", max_bytes=MAX_SCORES_BYTES,
                                  missing="neither 'production', 'model:KEY' nor an existing scores file",
                                  too_large="the scores file is larger than {mb} MB"), "--ranking")


def bootstrap_progress(stream=None, *, after: float = PROGRESS_AFTER, clock=None):
    """``report(done, total)`` for the bootstrap: once the resamples done so far project a bootstrap longer than
    ``after`` seconds, one line on standard error at each report — how many are done, in what time, and about how
    long the rest takes — so that a log of a million sessions does not run for many minutes in silence; nothing on
    a log the bootstrap gets through sooner.  Standard output (the report, ``--json``) is untouched."""
    import sys
    import time
    clock = clock or time.monotonic
    start: list = []

    def report(done: int, total: int) -> None:
        now = clock()
        if not start:
            start.append(now)                   # the first call comes before the first resample
            return
        spent = now - start[0]
        left = spent / max(done, 1) * (total - done)
        if done and spent + left >= after:
            print(f"evaluate: {done} of {total} bootstrap resamples in {_duration(spent)}; about {_duration(left)} "
                  "to go (--n-boot sets how many)", file=stream or sys.stderr, flush=True)
    return report


def _duration(seconds: float) -> str:
    """``42 s``, ``3 min 5 s`` or ``2 h 7 min``.

    >>> _duration(41.6), _duration(185.2), _duration(7620)
    ('42 s', '3 min 5 s', '2 h 7 min')
    """
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def run(a) -> int:
    """``evaluate``: flags → :class:`~ultr_core.tasks.RankingOptions` → :func:`~ultr_core.tasks.value_ranking` →
    printed."""
    from ultr_core.commands.options import judgements_option
    from ultr_core.tasks.value_ranking import RankingOptions, value_ranking
    opts = RankingOptions(ranking=a.ranking, model=a.model, k=a.k, n_boot=a.n_boot, seed=a.seed, prior=a.prior,
                          format=a.format, engine=a.engine, scheduler=a.scheduler, memory_limit=a.memory_limit,
                          estimators=None if "estimators" not in a else
                          tuple(k.strip().lower() for k in a.estimators.split(",") if k.strip()))
    opts = replace(opts, scores=_scores(a), judgements=judgements_option(a))   # files read before the log
    value = value_ranking(a.path, opts, report=bootstrap_progress(after=PROGRESS_AFTER))
    print(value.to_json() if a.json else "\n".join(printable(x) for x in value.lines()))
    return 0
