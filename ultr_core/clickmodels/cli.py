"""``python -m ultr_core click-models LOG``: fit and score every click model on a log, as PyClick's
``examples/Example.py`` does (first 75 % of the sessions train, test sessions of unseen queries dropped)."""
from __future__ import annotations

import argparse
import json

from ultr_core.errors import printable

__all__ = ["add_parser"]


def add_parser(sub) -> None:
    from ultr_core.clickmodels.registry import CLICK_MODELS
    from ultr_core.logs.formats import LOG_FORMATS
    session_formats = [f.name for f in LOG_FORMATS if f.kind != "folder"]     # an ULTRA folder has no sessions
    p = sub.add_parser("click-models", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
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
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(fn=run)


def _sessions(path: str, fmt, name: str):
    """The log's sessions, read out of core by DuckDB (any format the app reads); the file resolved once."""
    from ultr_core.clickmodels.outofcore import sessions_from_source
    from ultr_core.logs.sniff import resolve_source
    src = resolve_source(path, fmt, name)
    return sessions_from_source(src, src.fmt, name)


def _checked(a):
    """Options that do not apply are refused, not ignored; the output is checked before any fit."""
    from ultr_core.errors import ConfigError
    if a.test and a.split is not None:
        raise ConfigError("--split", "does not apply with --test (the whole log trains, --test scores)")
    if a.test_format and not a.test:
        raise ConfigError("--test-format", "applies to --test; give --test too")
    if a.relevance:
        from ultr_core.logs.outputs import check_output
        return check_output(a.relevance, a.force, (".csv",), "--relevance")
    if a.force:
        raise ConfigError("--force", "applies to --relevance; give --relevance too")
    return None


def run(a) -> int:
    from ultr_core.clickmodels.compare import compare_click_models, parse_models
    from ultr_core.logs.outputs import atomic_write, json_safe, safe_csv
    keys = parse_models(a.models)
    out_path = _checked(a)
    if a.test:
        out = compare_click_models(_sessions(a.path, a.format, a.path), a.path, keys, 0.75,
                                   _sessions(a.test, a.test_format, a.test), identifiability=a.identifiability)
    else:                                     # grouped into patterns by DuckDB: any size within its memory limit
        from ultr_core.clickmodels.patterns import patterns_from_source
        from ultr_core.logs.sniff import resolve_source
        src = resolve_source(a.path, a.format, a.path)                  # paths, compression and format: once
        out = compare_click_models(patterns_from_source(src, src.fmt, a.path, 0.75 if a.split is None else a.split),
                                   a.path, keys, identifiability=a.identifiability)
    rel = out.pop("relevance")
    if out_path is not None:
        atomic_write(out_path, lambda tmp: safe_csv(rel, tmp), "--relevance")
    if a.json:
        print(json.dumps(json_safe(out), allow_nan=False))
        return 0
    for n in out["notes"]:
        print(printable(f"note: {n}"))
    print(printable(f"{a.path}: {out['train_sessions']:,} training sessions, {out['test_sessions']:,} test sessions "
                    f"({out['dropped_test_sessions']:,} test sessions of unseen queries dropped)"))
    print(f"{'model':<6} {'log-likelihood':>15} {'perplexity':>11} {'cond. perplexity':>17} {'seconds':>8}")
    for m in out["models"].values():
        print(f"{m['label']:<6} {m['log_likelihood']:>15.4f} {m['perplexity']:>11.4f} "
              f"{m['conditional_perplexity']:>17.4f} {m['seconds']:>8.2f}")
    for m in out["models"].values():
        if "identifiability" in m:
            i = m["identifiability"]
            print(printable(f"{m['label']}: Fisher rank {i['rank']} of {i['parameters']} parameters (null space "
                            f"{i['null_dimension']}); " + ", ".join(f"{v} {k}" for k, v in i["counts"].items())
                            + (f"; weakest: {', '.join(w['parameter'] for w in i['weakest'][:3])}" if i["weakest"]
                               else "")))
    if out_path is not None:
        print(printable(f"wrote {len(rel):,} rows to {out_path}"))
    return 0
