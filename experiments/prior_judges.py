"""Issue #47, item 6: does the learned prior bring the click models' relevance closer to the judges?

A sparse log where the judges know the truth: PBM clicks on 300 queries seen ~10 times each, 15 documents per query
(5 shown per session, in a random order), the documents of a query sharing a query-level attractiveness; the judges
grade each document's true attractiveness 0–4 (fifths).  Every model is fitted with PyClick's ½ and with the learned
prior and scored against the judges (Spearman over judged pairs and nDCG@10 with 90 % intervals over queries,
prior-dominated pairs included, since the point is what the prior makes of them), over 5 seeds.

    python experiments/prior_judges.py
"""
import time

import numpy as np
import pandas as pd

from ultr_core.clickmodels.compare import compare_click_models
from ultr_core.logs.judgements import read_judgements

MODELS = ["dctr", "pbm", "ubm", "cm", "dcm", "sdbn", "dbn", "ccm"]


def log_and_judges(seed: int, n_sessions: int = 3000, n_queries: int = 300, per_query: int = 15, depth: int = 5):
    rng = np.random.default_rng(seed)
    level = rng.uniform(0.05, 0.9, n_queries)
    alpha = np.clip(level[:, None] + rng.normal(0, 0.1, (n_queries, per_query)), 0.01, 0.99)
    q = rng.integers(0, n_queries, n_sessions)
    docs = np.argsort(rng.random((n_sessions, per_query)), axis=1)[:, :depth]
    a = np.take_along_axis(alpha[q], docs, axis=1)
    clicks = rng.random(a.shape) < a * np.array([1.0, 0.7, 0.5, 0.35, 0.25])[:depth]
    frame = pd.DataFrame({"session_id": np.repeat(np.arange(n_sessions), depth), "query_id": np.repeat(q, depth),
                          "doc_id": docs.ravel(), "position": np.tile(np.arange(1, depth + 1), n_sessions),
                          "click": clicks.ravel().astype(int)})
    qq, dd = np.meshgrid(np.arange(n_queries), np.arange(per_query), indexing="ij")
    grades = np.minimum((alpha * 5).astype(int), 4)
    qrels = "".join(f"{x} 0 {y} {g}\n" for x, y, g in zip(qq.ravel(), dd.ravel(), grades.ravel()))
    return frame, read_judgements(qrels.encode(), name="truth", grades=(0, 4))


def main() -> None:
    t0, rows = time.perf_counter(), []
    for seed in range(5):
        frame, judges = log_and_judges(seed)
        for prior in ("pyclick", "learned"):
            out = compare_click_models(frame, models=MODELS, judgements=judges, include_prior=True, seed=seed,
                                       prior=prior)
            for m in out.models.values():
                j = m.judgements
                rows.append({"seed": seed, "prior": prior, "model": m.label, "log_likelihood": m.log_likelihood,
                             "spearman": j.spearman.estimate, "ndcg@10": j.ndcg.estimate})
    f = pd.DataFrame(rows)
    table = f.pivot_table(index="model", columns="prior", values=["log_likelihood", "spearman", "ndcg@10"],
                          aggfunc="mean", sort=False)
    print(table.round(4).to_string())
    wins = f.pivot_table(index=["seed", "model"], columns="prior", values="spearman")
    print(f"\nlearned > PyClick's ½ in Spearman: {(wins['learned'] > wins['pyclick']).sum()} of {len(wins)} "
          f"(model, seed) cases; {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
