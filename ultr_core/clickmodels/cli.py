"""``python -m ultr_core click-models LOG``: fit and score every click model on a log, as PyClick's
``examples/Example.py`` does (first 75 % of the sessions train, test sessions of unseen queries dropped)."""
from __future__ import annotations

import argparse
import json

from ultr_core.errors import printable

__all__ = ["add_parser"]


def add_parser(sub) -> None:
    from ultr_core.clickmodels.registry import CLICK_MODELS
    from ultr_core.logs.formats import FORMAT_NAMES
    p = sub.add_parser("click-models", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
                       help="fit click models (" + ", ".join(s.label for s in CLICK_MODELS) + ") and score them "
                            "on held-out sessions: log-likelihood and perplexity")
    p.add_argument("path", help="click log with session ids (CSV/TSV/Parquet, Yandex, PyClick, Baidu-ULTR)")
    p.add_argument("--format", choices=FORMAT_NAMES, help="file format (default: sniffed)")
    p.add_argument("--models", help="comma-separated of " + ", ".join(s.key for s in CLICK_MODELS) + " (default: all)")
    p.add_argument("--split", type=float, default=0.75, help="share of the sessions (file order) that train")
    p.add_argument("--test", help="a second log to score on instead of --split")
    p.add_argument("--relevance", metavar="OUT.csv", help="write one row per (query_id, doc_id): impressions, "
                                                          "clicks and each model's relevance estimate")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(fn=run)


def _sessions(path: str, fmt, name: str):
    """The log's sessions, read out of core by DuckDB (any format the app reads)."""
    from ultr_core.clickmodels.outofcore import sessions_from_source
    from ultr_core.logs.sniff import infer_format
    return sessions_from_source(path, fmt or infer_format(path, name), name)


def run(a) -> int:
    from ultr_core.clickmodels.compare import compare_click_models, parse_models
    keys = parse_models(a.models)
    if a.test:
        out = compare_click_models(_sessions(a.path, a.format, a.path), a.path, keys, a.split,
                                   _sessions(a.test, a.format, a.test))
    else:                                     # grouped into patterns by DuckDB: any size within its memory limit
        from ultr_core.clickmodels.patterns import patterns_from_source
        from ultr_core.logs.sniff import infer_format
        fmt = a.format or infer_format(a.path, a.path)
        out = compare_click_models(patterns_from_source(a.path, fmt, a.path, a.split), a.path, keys)
    rel = out.pop("relevance")
    if a.relevance:
        rel.to_csv(a.relevance, index=False)
    if a.json:
        print(json.dumps(out))
        return 0
    print(printable(f"{a.path}: {out['train_sessions']:,} training sessions, {out['test_sessions']:,} test sessions "
                    f"({out['dropped_test_sessions']:,} test sessions of unseen queries dropped)"))
    print(f"{'model':<6} {'log-likelihood':>15} {'perplexity':>11} {'cond. perplexity':>17} {'seconds':>8}")
    for m in out["models"].values():
        print(f"{m['label']:<6} {m['log_likelihood']:>15.4f} {m['perplexity']:>11.4f} "
              f"{m['conditional_perplexity']:>17.4f} {m['seconds']:>8.2f}")
    return 0
