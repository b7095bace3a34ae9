"""``python -m ultr_core evaluate LOG --ranking SCORES.csv``: the value of a candidate ranking on the logged
traffic by every off-policy estimator, with 90 % intervals from a bootstrap over sessions (docs/counterfactual.md)."""
from __future__ import annotations

import argparse
import os

from ultr_core.errors import ConfigError, counted, printable
from ultr_core.evaluation.intervals import interval_text

__all__ = ["add_parser", "run", "result_lines"]

#: the largest scores file read (bytes)
MAX_SCORES_BYTES = 512 * 2**20


def add_parser(sub) -> None:
    from ultr_core.clickmodels.prior import PRIORS
    from ultr_core.counterfactual.choices import DIRECT_MODELS, N_BOOT, SOURCES
    from ultr_core.counterfactual.estimators import ESTIMATORS
    from ultr_core.logs.formats import LOG_FORMATS
    p = sub.add_parser("evaluate", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
                       help="estimate a candidate ranking's value on a click log (" + ", ".join(
                           e.label for e in ESTIMATORS) + ") with 90 %% intervals, support and the log's own value")
    p.add_argument("path", help="click log with session ids (CSV/TSV/Parquet, Yandex, PyClick, Baidu-ULTR)")
    p.add_argument("--format", choices=[f.name for f in LOG_FORMATS if f.kind != "folder"],
                   help="format of LOG (default: sniffed)")
    p.add_argument("--ranking", default="production", help="the candidate: " + "; ".join(
        f"{s.label} — {s.help}" for s in SOURCES).replace("%", "%%") + " (a file path gives a scores file)")
    p.add_argument("--model", default="pbm", choices=DIRECT_MODELS, help="the direct method's click model")
    p.add_argument("--k", type=int, default=10, help="value = expected clicks in the top k per session")
    p.add_argument("--prior", choices=PRIORS, default="pyclick", help="--ranking model:KEY: the attractiveness "
                   "prior of the model's fit (as click-models --prior)")
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
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(fn=run, include_prior_dominated=False)


def _scores(a):
    """The scores file named by --ranking, or None for production / model:KEY."""
    if a.ranking == "production" or a.ranking.startswith("model:"):
        return None
    from ultr_core.logs.sniff import refuse_system_path
    refuse_system_path(a.ranking, "--ranking", "a scores file")
    if not os.path.isfile(a.ranking):
        raise ConfigError("--ranking", "neither 'production', 'model:KEY' nor an existing scores file")
    if os.path.getsize(a.ranking) > MAX_SCORES_BYTES:
        raise ConfigError("--ranking", f"the scores file is larger than {MAX_SCORES_BYTES // 2**20} MB")
    from ultr_core.logs.scores import read_scores
    with open(a.ranking, "rb") as f:
        return read_scores(f.read(), "--ranking")


def run(a) -> int:
    from ultr_core.clickmodels.outofcore import read_sessions
    from ultr_core.commands.options import judgements_option
    from ultr_core.counterfactual.evaluate import evaluate_ranking
    from ultr_core.logs.outputs import json_text
    scores, judgements = _scores(a), judgements_option(a)
    if a.prior != "pyclick" and not a.ranking.startswith("model:"):
        raise ConfigError("--prior", "applies to --ranking model:KEY (the prior of the model that re-ranks)")
    out = evaluate_ranking(read_sessions(a.path, a.format, a.path), a.path, a.ranking, scores, a.model, a.k, a.n_boot,
                           a.seed, judgements, prior=a.prior,
                           estimators=None if "estimators" not in a else
                           [k.strip().lower() for k in a.estimators.split(",") if k.strip()])
    if a.json:
        print(json_text(out))
    else:
        print("\n".join(printable(x) for x in result_lines(out)))
    return 0


def _cell(x: dict) -> str:
    return interval_text(x)


def result_lines(out: dict) -> list[str]:
    """The text report: the log, the candidate's notes, the log's own value, one line per estimator, support."""
    k = out["k"]
    lines = [f"{out['log']}: {out['sessions']:,} sessions, {out['queries']:,} queries; candidate: "
             f"{out['candidate']['label']}; value = expected clicks in the top {k} per session "
             f"({out['level']:.0%} intervals, {out['n_boot']} bootstrap resamples of the sessions)"]
    lines += [f"note: {n}" for n in out["notes"] + out["candidate"]["notes"]]
    lines.append(f"{'logged (observed)':<18} {_cell(out['logged'])}")
    for e in out["estimators"].values():
        support = f"support {e['support']:.0%} ({e['support_kind']})"
        value = f"refused: {e['refused']}" if e["estimate"] is None else f"{_cell(e):<30} {support}"
        lines.append(f"{e['label']:<18} {value}" + (f"\n{'':<18} note: {e['note']}" if e.get("note") else ""))
    s = out["support"]
    lines.append(f"support: {s['identified']:.0%} of the top-{k} slots identified, {s['at_position']:.0%} shown at "
                 f"their position, {s['examined']:.1%} hold documents with ≥ 10 examination-weighted impressions; "
                 f"the log's positions form {counted(out['position_bias']['components'], 'component')}")
    from ultr_core.counterfactual.estimators import ESTIMATOR_BY_KEY
    if any(ESTIMATOR_BY_KEY[key].reads_propensity for key in out["estimators"]):
        lines.append(f"logging propensities (DR, policy-aware IPS): {out['logging_propensities']['text']}")
    if "judged" in out:
        j = out["judged"]
        lines.append(j.get("note") or f"judged: DCG@{k} {_cell(j[f'dcg@{k}'])} (production order "
                                      f"{_cell(j[f'logged_dcg@{k}'])}); {j['judged_share']:.0%} of the top-{k} "
                                      "slots judged, unjudged count 0")
    return lines
