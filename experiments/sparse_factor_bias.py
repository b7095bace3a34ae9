"""How far from the truth is the identifiability PBM fit on a sparse log, and what would remove the gap?  (issue #58,
open; docs/identifiability_uncertainty.md, "Known limit")

On a log whose lists vary (``benchmarks/varied_lists.py``: 10 of a query's 20 documents per session in random order,
PBM clicks with o_k = 1/k) each document has a handful of impressions, one relevance each.  With one free parameter
per document and few cells per document, maximum likelihood need not converge to the truth as the log grows
(the incidental-parameter problem).  This script draws fresh logs (seeds) and prints, per log, o_k / o_1 from

* the fit every ``ig`` number comes from (:func:`ultr_core.identifiability.uncertainty.factor_uncertainty`:
  Bernoulli maximum likelihood, documents whose maximum lies on p = 1 left out), and
* Poisson fixed effects (:func:`poisson_fixed_effects`): each document's clicks split over its cells in proportion
  to n·o — the multinomial given its total clicks, free of its relevance.  Its score Σ_d (c_dk − C_d·π_dk) has
  expectation 0 under PBM's Bernoulli clicks too (E c_dk = n_dk·r_d·o_k), so it needs no per-document estimate.

with the mean and largest |log error| over ranks 2–10.  The constrained maximum likelihood (every document kept,
those at their cap r = 1/max o pinned there) is on the branch ``constrained-mle`` (commit 0293aff) — measured there,
not kept on main::

    python experiments/sparse_factor_bias.py [--seeds 3] [--sessions 100000] [--queries 10000]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

GENERATOR = Path(__file__).resolve().parents[1] / "benchmarks" / "varied_lists.py"
DEPTH = 10


def poisson_fixed_effects(doc, fac, n, c, *, n_factors: int, tol: float = 1e-12, steps: int = 10_000):
    """o / o_0 by Poisson regression with one fixed effect per document (alternating closed-form updates:
    r_d = C_d / Σ_k n_dk·o_k, then o_k = Σ_d c_dk / Σ_d n_dk·r_d), and the steps it took.  Documents without a click
    carry nothing; a document clicked at every impression is an ordinary one here.

    >>> doc, fac = np.array([0, 0, 1, 1, 2, 2]), np.array([0, 1, 0, 1, 0, 1])
    >>> n = np.array([10.0, 10.0, 10.0, 10.0, 1.0, 2.0])
    >>> c = np.array([4.0, 2.0, 2.0, 1.0, 1.0, 1.0])     # the third: clicked at every impression at rank 1
    >>> o, steps = poisson_fixed_effects(doc, fac, n, c, n_factors=2)
    >>> np.round(o, 4).tolist()
    [1.0, 0.5]
    """
    n_docs = int(doc.max()) + 1
    clicks = np.bincount(doc, c, n_docs)
    o = np.ones(n_factors)
    for step in range(1, steps + 1):
        r = clicks / np.maximum(np.bincount(doc, n * o[fac], n_docs), 1e-300)
        new = np.bincount(fac, c, n_factors) / np.maximum(np.bincount(fac, n * r[doc], n_factors), 1e-300)
        new = new / new[0]
        if np.abs(new - o).max() < tol:
            return new, step
        o = new
    return o, steps


def cells(seed: int, sessions: int, queries: int):
    """(doc, factor, impressions, clicks) of one fresh log, written by the benchmarks' generator as its users run it."""
    import pandas as pd
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.parquet"
        subprocess.run([sys.executable, str(GENERATOR), str(path), "--sessions", str(sessions), "--queries",
                        str(queries), "--seed", str(seed)], check=True, capture_output=True)
        t = pd.read_parquet(path)
    ids, doc = np.unique(t["doc_id"].to_numpy(), return_inverse=True)
    key = doc * DEPTH + t["position"].to_numpy().astype(np.int64) - 1
    n = np.bincount(key, minlength=len(ids) * DEPTH).astype(float)
    c = np.bincount(key, t["click"].to_numpy().astype(float), len(ids) * DEPTH)
    k = np.flatnonzero(n > 0)
    return k // DEPTH, k % DEPTH, n[k], c[k]


def _line(name: str, o: np.ndarray) -> str:
    err = np.log(o[1:] * np.arange(2, DEPTH + 1))           # log(ô_k / o_k) with o_k / o_1 = 1/k
    return (f"  {name:<24s} o2 {o[1]:.4f}  o5 {o[4]:.4f}  o10 {o[9]:.4f}   mean log error {err.mean():+.3f}, "
            f"largest {np.abs(err).max():.3f}")


def main(argv=None) -> None:
    from ultr_core.identifiability.uncertainty import factor_uncertainty
    a = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    a.add_argument("--seeds", type=int, default=3)
    a.add_argument("--sessions", type=int, default=100_000)
    a.add_argument("--queries", type=int, default=10_000)
    args = a.parse_args(argv)
    for seed in range(args.seeds):
        doc, fac, n, c = cells(seed, args.sessions, args.queries)
        z = np.zeros(DEPTH, np.int64)
        u = factor_uncertainty(doc, fac, n, c=c, n_docs=int(doc.max()) + 1, n_factors=DEPTH, component=z,
                               references=z)
        o, steps = poisson_fixed_effects(doc, fac, n, c, n_factors=DEPTH)
        print(f"seed {seed}: {args.sessions:,} sessions, {len(n):,} cells, {int(doc.max()) + 1:,} documents; "
              f"ig's fit converged {bool(u.converged)}, standard error of log o10 {u.log_se[9]:.3f}; "
              f"fixed effects in {steps} steps")
        print(_line("ig's fit (Bernoulli ML)", u.o / u.o[0]))
        print(_line("Poisson fixed effects", o))


if __name__ == "__main__":
    main()
