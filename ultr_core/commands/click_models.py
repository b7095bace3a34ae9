"""``python -m ultr_core click-models LOG``: fit and score every click model on a log, as PyClick's
``examples/Example.py`` does (first 75 % of the sessions train, test sessions of unseen queries dropped)."""
from __future__ import annotations

from dataclasses import replace

from ultr_core.commands.options import HelpFormatter, judgements_option
from ultr_core.errors import printable

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    from ultr_core.clickmodels.prior import DEFAULT_PRIOR, PRIORS
    from ultr_core.clickmodels.registry import CLICK_MODELS
    from ultr_core.logs.engines import add_engine_options
    from ultr_core.logs.formats import LOG_FORMATS
    session_formats = [f.name for f in LOG_FORMATS if f.kind != "folder"]     # an ULTRA folder has no sessions
    p = sub.add_parser("click-models", formatter_class=HelpFormatter,
                       help="fit click models (" + ", ".join(s.label for s in CLICK_MODELS) + ") and score them "
                            "on held-out sessions: log-likelihood and perplexity")
    p.add_argument("path", help="click log with session ids (CSV/TSV/Parquet, Yandex, PyClick, Baidu-ULTR)")
    p.add_argument("--format", choices=session_formats, help="format of LOG (default: sniffed)")
    p.add_argument("--models", help="comma-separated of " + ", ".join(s.key for s in CLICK_MODELS) + " (default: all)")
    p.add_argument("--split", type=float, default=None,
                   help="share of the sessions (in file order) that train (default 0.75; not with --test)")
    p.add_argument("--test", help="a second log to score on instead of --split (the same list depth)")
    p.add_argument("--test-format", choices=session_formats, help="format of --test (default: sniffed)")
    p.add_argument("--relevance", metavar="OUT.csv", help="write one row per (query_id, doc_id): impressions, "
                                                          "clicks and each model's relevance estimate")
    p.add_argument("--force", action="store_true", help="overwrite --relevance when it exists")
    p.add_argument("--identifiability", action="store_true", help="also the Fisher information of each fitted "
                   "model: its rank, null space and which parameters the log leaves unidentified or weak")
    p.add_argument("--judgements", metavar="FILE", help="editorial judgements (TREC/LETOR qrels `query 0 doc grade`, "
                   "or CSV/TSV with query, document and grade columns): each model's relevance scored against them "
                   "(Spearman, Kendall, nDCG@10 with 90 %% intervals over queries)")
    p.add_argument("--grades", default="0-5", help="--judgements: the grade range LOW-HIGH; rows outside are counted")
    p.add_argument("--include-prior-dominated", action="store_true", help="--judgements: also score the pairs whose "
                   "estimate the prior decides (fewer than 10 examination-weighted training impressions)")
    p.add_argument("--prior", choices=PRIORS, default=DEFAULT_PRIOR, help="the attractiveness prior: auto — each "
                   "model the one that fits sparse logs better (learned for " + ", ".join(
                       s.label for s in CLICK_MODELS if s.prior == "learned") + "; PyClick's for the rest), pyclick — "
                   "PyClick's one success in two trials for every model, or learned — shrinkage towards a shared "
                   "baseline (global, per query or per mean rank) with its strength, chosen on a held-out fifth of "
                   "the training sessions, for every model")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap over queries (--judgements) and of the "
                                                       "learned prior's held-out fifth")
    p.add_argument("--memory-limit", default="2GB", help="memory budget of the log read out of core: DuckDB's limit "
                   "(larger work spills to a temporary folder), and the distinct (result list, click) patterns held "
                   "in memory (one per 2 kB; more are read from disk chunk by chunk), and the cells a model's counts "
                   "are summed in (32 bytes each; more are summed by another pass over the patterns)")
    add_engine_options(p, "groups the log into sessions")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(fn=run)


#: the largest judgements file read (bytes): a qrels line is ~20 bytes, so tens of millions of judgements


def _output(a):
    """The --relevance file checked before any fit (--force without it refused)."""
    from ultr_core.errors import ConfigError
    if a.relevance:
        from ultr_core.logs.outputs import check_output
        return check_output(a.relevance, a.force, (".csv",), option="--relevance")
    if a.force:
        raise ConfigError("--force", "applies to --relevance; give --relevance too")
    return None


def run(a) -> int:
    """``click-models``: flags → :class:`~ultr_core.tasks.ClickModelOptions` → :func:`~ultr_core.tasks.fit_click_models`
    → printed."""
    from ultr_core.logs.outputs import atomic_write, safe_csv
    from ultr_core.tasks.fit_click_models import ClickModelOptions, fit_click_models
    opts = ClickModelOptions(models=tuple(a.models.split(",")) if a.models else None, format=a.format,
                             split=a.split, test=a.test, test_format=a.test_format, identifiability=a.identifiability,
                             include_prior_dominated=a.include_prior_dominated, prior=a.prior, seed=a.seed,
                             memory_limit=a.memory_limit, engine=a.engine, scheduler=a.scheduler)
    out_path = _output(a)
    opts = replace(opts, judgements=judgements_option(a))         # the file checked before the log is read
    fit = fit_click_models(a.path, opts)
    if out_path is not None:
        atomic_write(out_path, lambda tmp: safe_csv(fit.relevance, tmp), "--relevance", force=a.force)
    if a.json:
        print(fit.to_json())
        return 0
    print("\n".join(printable(x) for x in fit.lines()))
    if out_path is not None:
        print(printable(f"wrote {len(fit.relevance):,} rows to {out_path}"))
    return 0
