"""Shared generated click logs for the reader and estimator tests."""
import numpy as np
import pandas as pd


def random_log(seed=0, n_sessions=3000, n_q=40, n_d=8, eta=0.8):
    """Sessions showing the query's documents in random order (so documents move between
    positions), clicks ~ Bernoulli(r · o_p); o_p = (1/p)^eta."""
    rng = np.random.default_rng(seed)
    r = rng.uniform(0.05, 0.9, (n_q, n_d))
    q = rng.integers(0, n_q, n_sessions)
    perm = np.argsort(rng.random((n_sessions, n_d)), axis=1)
    qq, dd = np.repeat(q, n_d), perm.ravel()
    pos = np.tile(np.arange(1, n_d + 1), n_sessions)
    o = (1 / np.arange(1, n_d + 1)) ** eta
    click = (rng.random(len(qq)) < r[qq, dd] * o[pos - 1]).astype(int)
    df = pd.DataFrame({"session_id": np.repeat(np.arange(n_sessions), n_d), "query_id": qq,
                       "doc_id": [f"d{x}" for x in dd], "position": pos, "click": click,
                       "device": np.where(np.repeat(q, n_d) % 2 == 0, "mobile", "desktop")})
    return df, o / o[0]
