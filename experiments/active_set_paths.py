"""Does the identifiability PBM fit depend on where Newton starts?  (issue #58, open;
docs/identifiability_uncertainty.md, "Which documents carry information")

The fit (:func:`ultr_core.identifiability.newton.fit_newton`) leaves documents whose maximum lies on the boundary
p = 1 out of the fit, as it meets them.  This script fits one Poisson resample of a log with varied lists
(``benchmarks/varied_lists.py``: 100,000 sessions over 10,000 queries, 10 of 20 documents per session, PBM clicks
with o_k = 1/k) twice on the same cells — from the fit's own count-based start and from the true factors — and
scores each result, and the truth, by the log-likelihood of *every* candidate document at its own maximum under
r·o ≤ 1 given the factors (the constrained maximum likelihood's objective).  Prints both fits' o_k/o_1, their
documents left at the boundary, and the three log-likelihoods::

    python experiments/active_set_paths.py [--seed 0]        # --seed -1: the log itself, no resample
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

GENERATOR = Path(__file__).resolve().parents[1] / "benchmarks" / "varied_lists.py"


def cells(seed: int):
    """(doc, factor, impressions, clicks) of the candidate documents (clicked, not at every impression, shown at two
    ranks or more, as :func:`ultr_core.identifiability.uncertainty.factor_uncertainty` fits them) of one Poisson
    resample of the log; the number of documents; the depth."""
    import pandas as pd
    with tempfile.TemporaryDirectory() as tmp:                 # the benchmarks' generator, run as its users run it
        path = Path(tmp) / "log.parquet"
        subprocess.run([sys.executable, str(GENERATOR), str(path), "--sessions", "100000", "--queries", "10000"],
                       check=True, capture_output=True)
        t = pd.read_parquet(path)
    depth = 10
    doc = t["doc_id"].to_numpy()                            # one id per (query, document) already
    ids, doc = np.unique(doc, return_inverse=True)
    w = (np.random.default_rng(seed + 1).poisson(1.0, 100_000) if seed >= 0 else np.ones(100_000)).repeat(depth)
    w = w.astype(float)
    key = doc * depth + t["position"].to_numpy() - 1
    n = np.bincount(key, w, len(ids) * depth)
    c = np.bincount(key, w * t["click"].to_numpy(), len(ids) * depth)
    k = np.flatnonzero(n > 0)
    d, f, n, c = k // depth, k % depth, n[k], c[k]
    cd, nd, deg = np.bincount(d, c, len(ids)), np.bincount(d, n, len(ids)), np.bincount(d, minlength=len(ids))
    keep = ((cd > 0) & (cd < nd) & (deg >= 2))[d]
    return d[keep], f[keep], n[keep], c[keep], len(ids), depth


def constrained_log_likelihood(d, f, n, c, o, n_docs: int) -> float:
    """Every document at its own maximum given the factors ``o`` (r·o ≤ 1 on its cells): the log-likelihood."""
    from ultr_core.identifiability.newton import documents_given_factors, log_likelihood
    theta = np.concatenate([np.zeros(n_docs), np.log(o / o[0])])
    top = np.full(n_docs, -np.inf)
    np.maximum.at(top, d, theta[n_docs + f])
    theta[:n_docs] = np.log(0.5) - np.where(np.isfinite(top), top, 0.0)
    theta = documents_given_factors(d, f, n, c=c, theta=theta, n_docs=n_docs, steps=400)
    return log_likelihood(n, c, np.exp(theta[d] + theta[n_docs + f]))


def main(argv=None) -> None:
    from ultr_core.identifiability.newton import fit_newton
    from ultr_core.identifiability.uncertainty import TOL
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("--seed", type=int, default=0, help="the Poisson resample (-1: the log itself)")
    seed = a.parse_args(argv).seed
    d, f, n, c, n_docs, depth = cells(seed)
    cd, nd = np.bincount(d, c, n_docs), np.bincount(d, n, n_docs)
    docs = np.log(np.clip((cd + 0.5) / (nd + 1.0), 1e-6, 0.99))
    truth = 1.0 / np.arange(1, depth + 1)
    what = "the log itself" if seed < 0 else f"resample {seed}"
    print(f"{what}: {len(n):,} cells of {int((nd > 0).sum()):,} candidate documents")
    for name, factors in (("count-based start (the fit's own)", np.zeros(depth)), ("start at the true factors",
                                                                                    np.log(truth))):
        theta, dec, _, boundary, _, _, _, _ = fit_newton(
            d, f, n, c=c, theta=np.concatenate([docs, factors]), n_docs=n_docs, n_factors=depth,
            reference=np.zeros(depth, np.int64), boundary=np.zeros(n_docs, bool), out=np.zeros(depth, bool), tol=TOL)
        o = np.exp(theta[n_docs:] - theta[n_docs])
        print(f"{name}: decrement {dec:.1e}, {int(boundary.sum()):,} documents left at the boundary")
        print("  o_k/o_1  " + " ".join(f"{v:.4f}" for v in o))
        print(f"  constrained log-likelihood {constrained_log_likelihood(d, f, n, c, o, n_docs):,.1f}")
    print(f"true factors o_k = 1/k: constrained log-likelihood "
          f"{constrained_log_likelihood(d, f, n, c, truth, n_docs):,.1f}")


if __name__ == "__main__":
    main()
