"""Click models on sparse logs (issue #62, item 4): where a quarter or more of the test cells (query, document, rank)
never occur in training, does every model fit the held-out sessions at least as well as CLAX — and as well as the
parameters the log was drawn with?

The logs are drawn from one user model with known parameters: queries by a Zipf law (a few frequent, most rare),
each session ``depth`` of its query's ``docs`` documents in a fresh random order, α ~ U(0.05, 0.95) per (query,
document), the eye-tracking examination curve and the model's default continuation (as
:mod:`ultr_core.clickmodels.recovery` draws them, σ = α).  The first 75 % of the sessions in file order train, the
rest test, test sessions of unseen queries dropped (PyClick's split).

    python experiments/sparse_logs.py [--models dbn,dcm,ccm,pbm] [--sessions 30000] [--seeds 0,1,2]
                                      [--clax-python /path/to/clax_venv/bin/python]
    python experiments/sparse_logs.py --real trainSample,testSample [--fractions 1,0.2,0.1,0.03] [--clax-python …]

``--real TRAIN,TEST``: a real log made sparse instead — PyClick's Yandex sample (``examples/data/trainSample`` and
``testSample`` of markovi/PyClick at commit 2a0e03a; 20 queries, 35,064 and 21,413 sessions): training keeps the
first ``f`` of each query's training sessions in file order, the test log stays whole, so that the smaller ``f``, the
more test cells training never shows (no truth to compare with).

Prints one markdown row per (generating model, seed, fitted model): the share of unseen test cells, held-out
log-likelihood of ours with each prior and with the default flags (each model its record's prior), of CLAX (when
``--clax-python`` is given; run unmodified with its Yandex baseline's settings by ``benchmarks/clax_comparison.py``'s
driver) and of the generating parameters.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from _common import frame_md

ROOT = Path(__file__).resolve().parents[1]


def sparse_log(model: str, n_sessions: int, *, queries: int = 3000, docs: int = 15, depth: int = 10,
               zipf: float = 1.1, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """(the log, α[q, d]): sessions of Zipf-distributed queries, each a random ``depth`` of the query's ``docs``."""
    from ultr_core.clickmodels.registry import MODEL_BY_KEY
    from ultr_core.clickmodels.samplers import EYE_TRACKING
    rng = np.random.default_rng(seed)
    attract = rng.uniform(0.05, 0.95, (queries, docs))
    weight = 1.0 / np.arange(1, queries + 1) ** zipf
    q = rng.choice(queries, n_sessions, p=weight / weight.sum())
    order = np.argsort(rng.random((n_sessions, docs)), axis=1)[:, :depth]
    a = np.take_along_axis(attract[q], order, axis=1)
    spec = MODEL_BY_KEY[model]
    clicks, _ = spec.sampler(a, np.ones_like(a, bool), EYE_TRACKING[:depth],
                             gamma=spec.continuation_by_rank(spec.gamma, 1.0, depth), rng=rng)
    f = pd.DataFrame({"session_id": np.repeat(np.arange(n_sessions), depth), "query_id": np.repeat(q, depth),
                      "doc_id": (order + docs * q[:, None]).ravel(),
                      "position": np.tile(np.arange(1, depth + 1), n_sessions),
                      "click": clicks.ravel().astype(np.int8)})
    return f, attract


def unseen_share(train, test) -> float:
    """The share of the test cells (pair, rank) — session-weighted — that no training session shows."""
    seen = set(zip(train.pairs.ravel().tolist(), np.tile(np.arange(train.depth), train.n_sessions).tolist()))
    cells = zip(test.pairs.ravel().tolist(), np.tile(np.arange(test.depth), test.n_sessions).tolist())
    return float(np.mean([c not in seen for c in cells]))


def run(model: str, n_sessions: int, seed: int, fitted: list[str], clax_python: str | None,
        queries: int = 3000, docs: int = 15) -> list[dict]:
    from ultr_core.clickmodels.compare import compare_click_models, train_test
    from ultr_core.clickmodels.evaluation import scores
    from ultr_core.clickmodels.registry import MODEL_BY_KEY
    from ultr_core.clickmodels.sessions import SessionArrays
    f, attract = sparse_log(model, n_sessions, queries=queries, docs=docs, seed=seed)
    s = SessionArrays.from_frame(f, "sparse")
    tr, te, dropped = train_test(s, split=0.75)
    share = unseen_share(tr, te)
    ours = {p: compare_click_models(f, "sparse", models=fitted, prior=p) for p in ("pyclick", "learned")}
    keys = s.pair_keys
    docs = attract.shape[1]
    alpha = attract[keys["query_id"].to_numpy(), keys["doc_id"].to_numpy() - docs * keys["query_id"].to_numpy()]
    spec = MODEL_BY_KEY[model]
    try:
        truth = scores(spec.cls().use_generating(alpha, spec.gamma), te.compress())["log_likelihood"]
    except ValueError:                       # set only for the models fitted by gradient
        truth = float("nan")
    clax = _clax(tr, te, fitted, clax_python) if clax_python else {}
    return [{"generated by": spec.label, "seed": seed, "test sessions": te.n_sessions, "unseen test cells":
             f"{share:.0%}", "model": MODEL_BY_KEY[k].label,
             "ours (½)": ours["pyclick"].models[k].log_likelihood,
             "ours (learned)": ours["learned"].models[k].log_likelihood, "ours (default)": _default(ours, k),
             "CLAX": clax.get(k, float("nan")), "generating parameters": truth if k == model else float("nan")}
            for k in fitted]


def run_real(train_path: str, test_path: str, fraction: float, fitted: list[str], clax_python: str | None) -> list:
    """The rows of one real-log split (module docstring, ``--real``)."""
    from ultr_core.clickmodels.compare import compare_click_models, train_test
    from ultr_core.clickmodels.outofcore import read_sessions
    from ultr_core.clickmodels.registry import MODEL_BY_KEY
    tr, te, _ = train_test(read_sessions(train_path, None, "train"), test=read_sessions(test_path, None, "test"))
    keep = np.zeros(tr.n_sessions, bool)
    for q in np.unique(tr.query):
        idx = np.flatnonzero(tr.query == q)
        keep[idx[: max(1, int(len(idx) * fraction))]] = True
    sub = tr.subset(keep)
    ours = {p: compare_click_models(sub, "train", models=fitted, test=te, prior=p) for p in ("pyclick", "learned")}
    clax = _clax(sub, te, fitted, clax_python) if clax_python else {}
    return [{"training share": fraction, "training sessions": sub.n_sessions, "test sessions": te.n_sessions,
             "unseen test cells": f"{unseen_share(sub, te):.0%}", "model": MODEL_BY_KEY[k].label,
             "ours (½)": ours["pyclick"].models[k].log_likelihood,
             "ours (learned)": ours["learned"].models[k].log_likelihood, "ours (default)": _default(ours, k),
             "CLAX": clax.get(k, float("nan"))} for k in fitted]


def _default(ours: dict, key: str) -> float:
    """Our log-likelihood with the default flags (``--prior auto``: each model its record's prior)."""
    from ultr_core.clickmodels.prior import DEFAULT_PRIOR, model_prior
    from ultr_core.clickmodels.registry import MODEL_BY_KEY
    return ours[model_prior(MODEL_BY_KEY[key], DEFAULT_PRIOR)].models[key].log_likelihood


def _clax(tr, te, fitted, clax_python) -> dict:
    """CLAX's held-out log-likelihood per fitted model key (``benchmarks/clax_comparison.py``'s ``run_clax``)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("clax_comparison", ROOT / "benchmarks" / "clax_comparison.py")
    clax = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(clax)
    chosen = {k: v for k, v in clax.MODELS.items() if set(v[1]) & set(fitted)}
    out = {}
    for _, ours, ll, _, _, error in clax.run_clax(tr, te, chosen, clax_python):
        if error:
            print(f"CLAX failed: {error[:300]}", file=sys.stderr)
        else:
            out.update({k: ll for k in ours})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="dbn,dcm,ccm,pbm", help="generating models")
    ap.add_argument("--fit", default="pbm,ubm,dcm,dcm_ml,dbn,ccm", help="fitted models")
    ap.add_argument("--sessions", type=int, default=30_000)
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--queries", type=int, default=3000)
    ap.add_argument("--docs", type=int, default=15, help="documents per query (each session shows 10)")
    ap.add_argument("--clax-python")
    ap.add_argument("--real", help="TRAIN,TEST: a real log's training and test files instead of simulated logs")
    ap.add_argument("--fractions", default="1,0.2,0.1,0.03", help="with --real: training shares kept per query")
    a = ap.parse_args()
    rows = []
    if a.real:
        for f in map(float, a.fractions.split(",")):
            rows += run_real(*a.real.split(","), f, a.fit.split(","), a.clax_python)
            print(pd.DataFrame(rows[-len(a.fit.split(",")):]).to_string(index=False), flush=True)
        print(frame_md(pd.DataFrame(rows).round(5)))
        return
    for model in a.models.split(","):
        for seed in map(int, a.seeds.split(",")):
            rows += run(model, a.sessions, seed, a.fit.split(","), a.clax_python, a.queries, a.docs)
            print(pd.DataFrame(rows[-len(a.fit.split(",")):]).to_string(index=False), flush=True)
    print(frame_md(pd.DataFrame(rows).round(5)))


if __name__ == "__main__":
    main()
