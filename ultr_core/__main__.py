"""Command line: ``python -m ultr_core {ig,ig-fit,simulate,train} …``  (``--help`` on each)."""
from __future__ import annotations

import argparse
import os
import sys

from ultr_core.commands.options import HelpFormatter
from ultr_core.errors import ConfigError, DataFormatError, printable


def _ig(a) -> int:
    """``ig``: flags → :class:`~ultr_core.tasks.CheckOptions` → :func:`~ultr_core.tasks.check_log` → printed."""
    from ultr_core.tasks.check_log import CheckOptions, check_log
    opts = CheckOptions(bias=tuple(c.strip() for c in a.bias.split(",") if c.strip()) if a.bias else ("position",),
                        format=a.format, columns=tuple((_column_map(a.column) or {}).items()), document=a.document,
                        doc_columns=tuple(c.strip() for c in a.doc_columns.split(",")) if a.doc_columns else None,
                        engine=a.engine, scheduler=a.scheduler, memory_limit=a.memory_limit, merge=a.merge,
                        intervene=a.intervene, estimate=None if a.estimate == "none" else a.estimate,
                        bootstrap=a.bootstrap, seed=a.seed, users=a.users, profile=a.profile, certainty=a.certainty,
                        swap_impressions=a.swap_impressions, objective=a.objective)   # every option checked first
    if a.documents:
        from ultr_core.logs.outputs import check_output
        a.documents = check_output(a.documents, a.force, (".csv",), option="--documents")
    from ultr_core.commands.options import judgements_option
    judged = judgements_option(a)                                  # the file checked before the log is read
    check = check_log(a.path, opts)
    rep = check.report
    if a.documents:
        from ultr_core.identifiability.records import DocumentsFile
        from ultr_core.logs.outputs import atomic_write, safe_csv
        frame = check.documents
        atomic_write(a.documents, lambda tmp: safe_csv(frame, tmp), "--documents", force=a.force)
        rep = rep.with_(documents_file=DocumentsFile(path=str(a.documents), rows=len(frame),
                                                     status=frame["status"].value_counts().to_dict()))
    if judged is not None:
        rep = rep.with_(judgements=check.judge(judged))
    print(check.to_json(rep) if a.json else printable(check.text(rep)))   # a user's value cannot drive the terminal
    return 0


def _column_map(pairs) -> dict | None:
    """``--column FILE_COLUMN=NAME`` options as a mapping; a pair without ``=`` or a file column given twice
    is refused (two file columns onto one name are refused by the reader)."""
    if not pairs:
        return None
    out = {}
    for kv in pairs:
        src, eq, tgt = kv.partition("=")
        if not eq or not src or not tgt:
            raise ConfigError("--column", f"{kv[:40]!r} is not FILE_COLUMN=NAME (e.g. --column qid=query_id)")
        if src in out:
            raise ConfigError("--column", f"file column {src[:40]!r} is mapped twice ({out[src]!r} and {tgt!r})")
        out[src] = tgt
    return out


def _check_seeds(a) -> None:
    """Seeds are whole numbers ≥ 0 (numpy refuses negative ones deep inside a run)."""
    for opt in ("seed", "data_seed"):
        v = getattr(a, opt, None)
        if v is not None and not 0 <= v < 2 ** 32:
            raise ConfigError(f"--{opt.replace('_', '-')}",
                              f"must be a whole number from 0 to {2 ** 32 - 1:,}, got {v}")


def _ig_fit(a) -> int:
    from ultr_core.identifiability.repairs import fit_repaired, fit_source
    if not 1 <= a.impressions <= 10 ** 9:
        raise ConfigError("--impressions", f"must be a whole number from 1 to 1,000,000,000, got {a.impressions}")
    if not 1 <= a.max_iter <= 10 ** 7:
        raise ConfigError("--max-iter", f"must be a whole number from 1 to 10,000,000, got {a.max_iter}")
    table, r, o, data = fit_source(a.path, seed=a.seed, impressions=a.impressions)
    out = fit_repaired(table, r, o, data=data, method=a.algorithm, repair=a.repair, init=a.init, seed=a.seed,
                       max_iter=a.max_iter, impressions=a.impressions)
    out = {"source": a.path, "algorithm": a.algorithm, "repair": a.repair, "init": a.init,
           "n_components": out.pop("components"), "n_components_after_repair": out.pop("components_after"), **out}
    if a.json:
        from ultr_core.logs.outputs import json_text
        print(json_text(out))
    else:
        for k, v in out.items():
            if k != "observation":
                print(f"{k:>26}: {v:.4f}" if isinstance(v, float) else f"{k:>26}: {v}")
    return 0


def _simulate(a) -> int:
    from ultr_core.data.sources import load_dataset
    from ultr_core.logs.outputs import atomic_write, check_output
    from ultr_core.simulation.clickmodel import ClickModelConfig
    from ultr_core.simulation.params import values_of
    from ultr_core.simulation.simulator import ClickSimulator
    out = check_output(a.out, a.force, (".parquet", ".csv"))
    cfg = ClickModelConfig.from_values(values_of(a), logging="given" if a.dataset.startswith("ig") else "svm")
    ds = load_dataset(a.dataset, a.seed if a.data_seed is None else a.data_seed)     # data from --seed, as before
    log = ClickSimulator(cfg, seed=a.seed).fit(ds).simulate(ds.train, a.sessions)
    atomic_write(out, log.to_parquet if out.suffix == ".parquet" else log.to_csv, force=a.force)
    print(f"wrote {len(log):,} rows ({log.n_sessions:,} sessions) to {out}")
    return 0


def _train(a) -> int:
    from ultr_core.algorithms.config import PAPER_SCALE, TRAIN_FLAGS, TrainConfig
    from ultr_core.simulation.clickmodel import ClickModelConfig
    from ultr_core.simulation.params import values_of
    from ultr_core.tasks.train_ranker import TrainOptions, train_ranker
    if not 1 <= a.seeds <= 100:                      # before the simulation's and training's own checks
        raise ConfigError("--seeds", f"must be 1 to 100, got {a.seeds}")
    hardware = {"device": a.device or ("auto" if a.paper_scale else "cpu"),
                "threads": a.threads if a.threads is not None else (min(os.cpu_count() or 1,
                64) if a.paper_scale else 1)}
    base = TrainConfig(algorithm=a.algorithm, seed=a.seed,
                       **(PAPER_SCALE if a.paper_scale else {"clicks": a.clicks}) | hardware)
    options = TrainOptions(dataset=a.dataset, click=ClickModelConfig.from_values(values_of(a)),
                           train=TrainConfig.from_pairs(a.set or [], base, dedicated=TRAIN_FLAGS),
                           sessions=a.sessions, seeds=a.seeds, data_seed=a.data_seed)
    result = train_ranker(options)
    print(result.to_json() if a.json else "\n".join(result.lines()))
    return _diverged_status(result.diverged)


def _diverged_status(seeds: list) -> int:
    """Exit status 3 with one line on stderr when a seed's fit diverged (its numbers were printed as null/nan)."""
    if not seeds:
        return 0
    print(f"error: the fit diverged for seed(s) {', '.join(map(str, seeds))}: non-finite metrics or observation "
          "estimates — lower lr, set clip_norm or max_weight", file=sys.stderr)
    return 3


def _lazy(module: str):
    """The ``add_parser`` of a command that lives in ``module``, imported when the command is built."""
    return lambda sub: __import__(module, fromlist=["add_parser"]).add_parser(sub)


def _add_ig(sub) -> None:
    ig = sub.add_parser("ig", formatter_class=HelpFormatter,
                        help="identifiability report of a click log")
    ig.add_argument("path", help="click log: CSV/TSV/Parquet file or glob (gzip too), ULTRA directory, "
                                 "Yandex (2011 / CLARA2, 2013) or Baidu-ULTR session file")
    from ultr_core.logs.formats import FORMAT_NAMES
    ig.add_argument("--format", choices=FORMAT_NAMES,
                    help="file format (default: from the extension, else sniffed from the content)")
    ig.add_argument("--bias", default="position", help="comma-separated bias-factor columns")
    ig.add_argument("--document", choices=["auto", "query", "global"], default="auto",
                    help="a document is the (query_id, doc_id) pair ('query') or doc_id alone ('global'); 'auto': "
                         "'global' for ULTRA folders (a document is a feature vector, as the official check), "
                         "'query' for click logs. The report says when the other key changes the verdict")
    ig.add_argument("--doc-columns", help="comma-separated feature columns that identify a document instead")
    ig.add_argument("--column", action="append", metavar="FILE_COLUMN=NAME",
                    help="map a file column onto query_id, doc_id, position, click or shown (repeatable)")
    from ultr_core.identifiability.curve_methods import ESTIMATOR_LABELS, ESTIMATORS
    ig.add_argument("--estimate", default="all_pairs", choices=["none", *ESTIMATORS],
                    help="observation curve per IG component: " + "; ".join(
                        f"{k}: {v}" for k, v in ESTIMATOR_LABELS.items()) + " (Agarwal et al. 2019)")
    ig.add_argument("--bootstrap", type=int, default=None,
                    help="document-bootstrap resamples for the 90%% intervals (default 100)")
    from ultr_core.logs.engines import add_engine_options
    add_engine_options(ig, "counts the log out of core")
    ig.add_argument("--memory-limit", default="2GB", help="DuckDB memory limit; larger work spills to a "
                                                           "temporary directory")
    from ultr_core.clickmodels.registry import USER_MODELS
    ig.add_argument("--users", choices=USER_MODELS, default=USER_MODELS[0], help="what the verdict means for "
                    "users who click as this model (trust: relevance up to an affine map; each factor needs two "
                    "documents)")
    ig.add_argument("--merge", action="store_true", help="propose node merges that connect the graph")
    ig.add_argument("--intervene", action="store_true", help="propose node interventions (swaps)")
    ig.add_argument("--seed", type=int, default=0, help="seed of the fits and the bootstrap")
    ig.add_argument("--json", action="store_true", help="print one JSON object")
    ig.add_argument("--documents", metavar="FILE.csv", help="also write relevance per document with its 90 %% "
                    "interval, component and status (PBM Fisher information at a converged fit)")
    ig.add_argument("--force", action="store_true", help="overwrite the --documents file when it exists")
    ig.add_argument("--profile", metavar="FACTOR", help="profile-likelihood interval of one factor's ratio to its "
                    "reference beside the Fisher one, e.g. --profile position=6")
    ig.add_argument("--certainty", type=int, metavar="N", help="plan N swaps (showing logged documents at other "
                    "factors) that most cut the weakest factor's variance (an optimal design on the log's information)")
    ig.add_argument("--objective", choices=["worst", "mean"], help="--certainty: cut the weakest factor's variance "
                    "(worst, the default) or the mean over its component")
    ig.add_argument("--swap-impressions", type=int, help="--certainty: impressions per swap (default 100)")
    ig.add_argument("--judgements", metavar="FILE", help="editorial judgements (qrels or CSV/TSV): the fit's relevance "
                    "per (query, document) scored against them, over all documents and within components")
    ig.add_argument("--grades", default="0-5", help="--judgements: the grade range LOW-HIGH")
    ig.set_defaults(fn=_ig, include_prior_dominated=False)


def _add_ig_fit(sub) -> None:
    fx = sub.add_parser("ig-fit", formatter_class=HelpFormatter,
                        help="fit an embedding model (to convergence) with or without a repair and score it "
                             "against the truth (Identifiability Matters, Table 1)")
    fx.add_argument("path", help="paper:K (the paper's fully synthetic data, K = 1–4), an ULTRA directory (clicks "
                                 "simulated from its labels: 10^6 impressions per row) or a click log with a "
                                 "'label' column")
    fx.add_argument("--algorithm", default="dla", choices=["dla", "dla_ls", "no_debias", "regression_em", "two_tower"],
                    help="embedding model (dla: the paper's update rule)")
    fx.add_argument("--repair", default="none", choices=["none", "merge", "intervene"],
                    help="node merging on the position, or node intervention (swaps shown with fresh clicks)")
    fx.add_argument("--init", default="random", choices=["random", "ones"],
                    help="initial observations: random (DLA_R) or 1 (DLA_I, Table 6)")
    fx.add_argument("--impressions", type=int, default=1_000_000, help="impressions per simulated row")
    fx.add_argument("--max-iter", type=int, default=20_000, help="iteration cap (tolerance 1e-9)")
    fx.add_argument("--seed", type=int, default=0, help="seed of the data, clicks and initialisation")
    fx.add_argument("--json", action="store_true", help="print one JSON object")
    fx.set_defaults(fn=_ig_fit)


def _add_simulate(sub) -> None:
    sm = sub.add_parser("simulate", formatter_class=HelpFormatter,
                        help="simulate a click log and write it as Parquet or CSV")
    sm.add_argument("--dataset", default="synthetic",
                    help="synthetic, ig:K, mq2008:PATH[:FOLD], yahoo:PATH, ultra:PATH")
    from ultr_core.simulation.params import add_options
    add_options(sm)                                  # the simulation schema's options, shared with train
    sm.set_defaults(data_seed=None)                  # generated data from --seed unless --data-seed says otherwise
    sm.add_argument("--out", required=True, help="output .parquet or .csv (written atomically)")
    sm.add_argument("--force", action="store_true", help="overwrite --out when it exists")
    sm.set_defaults(fn=_simulate)


def _add_train(sub) -> None:
    tr = sub.add_parser("train", formatter_class=HelpFormatter,
                        help="simulate clicks, train one algorithm, print test metrics")
    tr.add_argument("--dataset", default="synthetic", help="synthetic, mq2008:PATH[:FOLD], yahoo:PATH, ultra:PATH")
    from ultr_core.algorithms.config import ALGORITHMS as _ALGS
    tr.add_argument("--algorithm", default="dla", choices=list(_ALGS), metavar="ALGORITHM",
                    help="one of " + ", ".join(_ALGS))
    from ultr_core.simulation.params import add_options
    add_options(tr)                                  # the simulation schema's options, shared with simulate
    tr.add_argument("--seeds", type=int, default=1, help="run this many seeds (seed, seed + 1, …) and print each and "
                                                         "the mean")
    tr.add_argument("--clicks", choices=["log", "online"], default="log",
                    help="train on batches of the simulated log, or on fresh clicks every step (ULTRA's online "
                         "simulation)")
    tr.add_argument("--paper-scale", action="store_true",
                    help="the official LBD scale: 512-256-128 + LayerNorm, Adagrad 0.05, clip 5, 10,000 online "
                         "steps, unclipped DLA weights (slow on a CPU)")
    tr.add_argument("--device", choices=["auto", "cpu", "cuda"], default=None,
                    help="where the ranker trains (default: cpu; auto with --paper-scale — cuda when available)")
    tr.add_argument("--threads", type=int, default=None,
                    help="torch threads on the CPU (default: 1, which keeps small fits fast on a busy machine; all "
                         "cores with --paper-scale)")
    from dataclasses import fields as _fields

    from ultr_core.algorithms.config import TrainConfig as _TC
    tr.add_argument("--set", action="append", metavar="KEY=VALUE",
                    help="training hyper-parameter, e.g. --set lr=0.05 --set model=linear (repeatable); keys: "
                         + ", ".join(f.name for f in _fields(_TC) if f.name not in ("algorithm", "seed")))
    tr.add_argument("--json", action="store_true", help="print one JSON object")
    tr.set_defaults(fn=_train)


#: the sub-commands: name, one line for the command list, the function that adds its full parser (which imports what
#: its options list; only the command being run is built — ``--help`` imports none of them)
COMMANDS = (
    ("ig", "identifiability report of a click log", _add_ig),
    ("ig-fit", "fit an embedding model with or without a repair and score it against the truth", _add_ig_fit),
    ("simulate", "simulate a click log and write it as Parquet or CSV", _add_simulate),
    ("train", "simulate clicks, train one algorithm, print test metrics", _add_train),
    ("click-models", "fit click models and score them on held-out sessions: log-likelihood and perplexity",
     _lazy("ultr_core.commands.click_models")),
    ("evaluate", "estimate a candidate ranking's value on a click log by off-policy estimators, with 90 %% "
                 "intervals", _lazy("ultr_core.commands.evaluate")),
    ("rankers", "train ULTR rankers beside click models on one simulated log with features",
     _lazy("ultr_core.commands.rankers")),
)


def _parser(argv=None) -> argparse.ArgumentParser:
    """The CLI's parser: one sub-command per :data:`COMMANDS` record.  With ``argv``, only the command it names is
    built in full (the others are one help line each); without, every command is."""
    ap = argparse.ArgumentParser(prog="python -m ultr_core", description="ULTR Explorer core tools",
                                 epilog="Errors print one line 'error: …' and exit with status 2; --debug shows the "
                                        "traceback of an unexpected error.")
    ap.add_argument("--debug", action="store_true", help="show the full traceback of unexpected errors")
    sub = ap.add_subparsers(dest="cmd", required=True)
    names = {name for name, _, _ in COMMANDS}
    chosen = None if argv is None else next((x for x in argv if x in names), "")
    for name, summary, add in COMMANDS:
        if chosen is None or name == chosen:
            add(sub)
        else:
            sub.add_parser(name, help=summary)
    return ap


def _plain_warnings() -> None:
    """Library warnings as one line ``warning: …`` each (once per message), never a source path."""
    import warnings
    seen = set()

    def _show(message, category, filename, lineno, file=None, line=None):
        text = printable(str(message).splitlines()[0][:200] if str(message) else category.__name__)
        if text not in seen:
            seen.add(text)
            print(f"warning: {text}", file=sys.stderr)
    warnings.showwarning = _show


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    a = _parser(argv).parse_args(argv)
    _plain_warnings()
    try:
        _check_seeds(a)
        return a.fn(a)
    except (DataFormatError, ConfigError, FloatingPointError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except MemoryError:
        if a.debug:
            raise
        print("error: out of memory — use fewer sessions, contexts or a smaller file", file=sys.stderr)
        return 2
    except Exception as e:       # the one top-level handler: no traceback without --debug
        if a.debug:
            raise
        msg = printable(str(e).splitlines()[0][:300]) if str(e) else ""
        print(f"error: unexpected {type(e).__name__}{': ' + msg if msg else ''} (run with --debug for the "
              "traceback)", file=sys.stderr)
        return 2


def main_exit() -> None:
    """Entry point of the ``ultr`` console script (same as ``python -m ultr_core``)."""
    sys.exit(main())


if __name__ == "__main__":
    main_exit()
