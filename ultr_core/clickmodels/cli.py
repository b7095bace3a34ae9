"""``python -m ultr_core click-models LOG``: fit and score every click model on a log, as PyClick's
``examples/Example.py`` does (first 75 % of the sessions train, test sessions of unseen queries dropped)."""
from __future__ import annotations

import argparse

from ultr_core.constraints import TRAIN_SHARE
from ultr_core.errors import printable

__all__ = ["add_parser", "judgements_option", "read_sessions", "judgement_lines"]


def add_parser(sub) -> None:
    from ultr_core.clickmodels.prior import PRIORS
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
    p.add_argument("--judgements", metavar="FILE", help="editorial judgements (TREC/LETOR qrels `query 0 doc grade`, "
                   "or CSV/TSV with query, document and grade columns): each model's relevance scored against them "
                   "(Spearman, Kendall, nDCG@10 with 90 %% intervals over queries)")
    p.add_argument("--grades", default="0-5", help="--judgements: the grade range LOW-HIGH; rows outside are counted")
    p.add_argument("--include-prior-dominated", action="store_true", help="--judgements: also score the pairs whose "
                   "estimate the prior decides (fewer than 10 examination-weighted training impressions)")
    p.add_argument("--prior", choices=PRIORS, default="pyclick", help="the attractiveness prior: PyClick's one success "
                   "in two trials, or learned — shrinkage towards a shared baseline (global, per query or per mean "
                   "rank) with its strength, chosen on a held-out fifth of the training sessions")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap over queries (--judgements) and of the "
                                                       "learned prior's held-out fifth")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(fn=run)


#: the largest judgements file read (bytes): a qrels line is ~20 bytes, so tens of millions of judgements
MAX_JUDGEMENTS_BYTES = 512 * 2**20


def judgements_option(a):
    """The --judgements file read and checked (None without), before any fit."""
    from ultr_core.errors import ConfigError
    if not a.judgements:
        if a.include_prior_dominated or a.grades != "0-5":
            raise ConfigError("--include-prior-dominated" if a.include_prior_dominated else "--grades",
                              "applies to --judgements; give --judgements too")
        return None
    import os

    from ultr_core.logs.judgements import parse_grades, read_judgements
    from ultr_core.logs.sniff import refuse_system_path
    low, high = parse_grades(a.grades)
    refuse_system_path(a.judgements, "--judgements", "a judgements file")
    if not os.path.isfile(a.judgements):
        raise ConfigError("--judgements", "file not found")
    if os.path.getsize(a.judgements) > MAX_JUDGEMENTS_BYTES:
        raise ConfigError("--judgements", f"larger than {MAX_JUDGEMENTS_BYTES // 2**20} MB")
    with open(a.judgements, "rb") as f:
        return read_judgements(f.read(), "--judgements", grades=(low, high))


def read_sessions(path: str, fmt, name: str):
    """The log's sessions, read out of core by DuckDB (any format the app reads); the file resolved once."""
    from ultr_core.clickmodels.outofcore import sessions_from_source
    from ultr_core.logs.sniff import resolve_source
    src = resolve_source(path, fmt, name)
    return sessions_from_source(src, src.fmt, name)


def _checked(a):
    """Options that do not apply are refused, not ignored; the output is checked before any fit."""
    from ultr_core.errors import ConfigError
    if a.split is not None:
        TRAIN_SHARE.check(a.split, "--split")
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
    from ultr_core.clickmodels.evaluation import fit_sentence
    from ultr_core.logs.outputs import atomic_write, json_text, safe_csv
    keys = parse_models(a.models)
    out_path = _checked(a)
    judged = dict(judgements=judgements_option(a), include_prior=a.include_prior_dominated, seed=a.seed, prior=a.prior)
    if a.test:
        out = compare_click_models(read_sessions(a.path, a.format, a.path), a.path, keys, 0.75,
                                   read_sessions(a.test, a.test_format, a.test), identifiability=a.identifiability,
                                   **judged)
    else:                                     # grouped into patterns by DuckDB: any size within its memory limit
        from ultr_core.clickmodels.patterns import patterns_from_source
        from ultr_core.logs.sniff import resolve_source
        src = resolve_source(a.path, a.format, a.path)                  # paths, compression and format: once
        out = compare_click_models(patterns_from_source(src, src.fmt, a.path, 0.75 if a.split is None else a.split),
                                   a.path, keys, identifiability=a.identifiability, **judged)
    rel = out.pop("relevance")
    if out_path is not None:
        atomic_write(out_path, lambda tmp: safe_csv(rel, tmp), "--relevance", force=a.force)
    if a.json:
        print(json_text(out))
        return 0
    for n in out["notes"]:
        print(printable(f"note: {n}"))
    print(printable(f"{a.path}: {out['train_sessions']:,} training sessions, {out['test_sessions']:,} test sessions "
                    f"({out['dropped_test_sessions']:,} test sessions of unseen queries dropped)"))
    print(f"{'model':<6} {'log-likelihood':>15} {'perplexity':>11} {'cond. perplexity':>17} {'seconds':>8}")
    for m in out["models"].values():
        print(f"{m['label']:<6} {m['log_likelihood']:>15.4f} {m['perplexity']:>11.4f} "
              f"{m['conditional_perplexity']:>17.4f} {m['seconds']:>8.2f}")
    if out.get("best_fit"):
        print(printable(fit_sentence(out["best_fit"]) + " — 90 % interval paired over the test sessions"))
    learned = [f"{m['label']} {m['prior']['baseline']}" + (f" × {m['prior']['strength']:g}" if m['prior']['baseline']
               != "pyclick" else "") for m in out["models"].values() if "prior" in m]
    if learned:
        print("learned prior (baseline × pseudo-impressions, chosen on a held-out fifth): " + ", ".join(learned))
    for m in out["models"].values():
        if "identifiability" in m:
            i = m["identifiability"]
            print(printable(f"{m['label']}: Fisher rank {i['rank']} of {i['parameters']} parameters (null space "
                            f"{i['null_dimension']}); " + ", ".join(f"{v} {k}" for k, v in i["counts"].items())
                            + (f"; weakest: {', '.join(w['parameter'] for w in i['weakest'][:3])}" if i["weakest"]
                               else "")))
    if "judgements" in out:
        print("\n".join(printable(x) for x in judgement_lines(out)))
    if out_path is not None:
        print(printable(f"wrote {len(rel):,} rows to {out_path}"))
    return 0


def judgement_lines(out: dict) -> list[str]:
    """The --judgements part of the text output: the file's counts, the rule, one line per model, the verdict."""
    j = out["judgements"]
    lines = [f"note: judgements: {n}" for n in j["file"]["notes"]]
    lines.append(f"judgements: {j['file']['rows']:,} kept, {j['matched_pairs']:,} matched to the log's pairs, "
                 f"{j['unmatched_judgements']:,} not in the log ({j['judgements_of_queries_not_in_the_log']:,} of "
                 f"queries the log lacks); {j['pairs_scored']:,} scored")
    lines.append(f"{j['prior_dominated']['rule']}: {j['prior_dominated']['matched_and_flagged']:,} judged pairs "
                 + ("included" if j["prior_dominated"]["included"] else "left out"))
    if "note" in j:
        return lines + [j["note"]]
    fmt = lambda x: f"{x['estimate']:+.3f} [{x['lower']:+.3f}, {x['upper']:+.3f}]"         # noqa: E731
    rows = [(m["label"], m["judgements"]) for m in [*out["models"].values(), *out.get("rankers", {}).values()]
            if "judgements" in m] + [("CTR", j["ctr"]), ("logged", j["logged_order"])]
    w = max(7, *(len(label) + 1 for label, _ in rows))
    lines.append(f"{'model':<{w}} {'Spearman [90 %]':>25} {'Kendall [90 %]':>25} {'nDCG@10 [90 %]':>25}")
    for label, a in rows:
        lines.append(f"{label:<{w}} {fmt(a['spearman']):>25} {fmt(a['kendall']):>25} {fmt(a['ndcg@10']):>25}")
    if j.get("verdict"):
        lines.append(j["verdict"]["text"])
    return lines
