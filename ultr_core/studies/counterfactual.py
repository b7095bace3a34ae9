"""The counterfactual estimators checked where the truth is known (issue #47, item 5; docs/counterfactual.md).

A log is drawn from a user model with known attractiveness: ``n_queries`` queries of ``depth`` documents each,
α ~ U(0.05, 0.95); the logging policy shows each query's production order (α plus N(0, 0.25²) noise, sorted) and,
in a share ``epsilon`` of the sessions, a uniformly random permutation instead.  Each candidate's true value is
its expected clicks in the top k under the generating user model, averaged over the (uniform) query distribution.

>>> frame, alpha = simulate_log("pbm", 40, n_queries=2, depth=3, seed=0)
>>> len(frame), alpha.shape
(120, (2, 3))
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ultr_core.clickmodels.models import PBM
from ultr_core.clickmodels.registry import MODEL_BY_KEY
from ultr_core.clickmodels.samplers import EYE_TRACKING
from ultr_core.clickmodels.sessions import SessionArrays
from ultr_core.counterfactual import candidate as cand
from ultr_core.counterfactual.evaluate import value_candidate

__all__ = ["simulate_log", "true_value", "coverage_rows", "CANDIDATES", "STUDY_USERS"]

#: the user models of the study: the PBM every estimator assumes, and a cascade (DCM) that breaks the assumption
STUDY_USERS = ("pbm", "dcm")
#: the candidates valued on every log: name → its values per pair from (true α, PBM fitted on the log itself, PBM
#: fitted on an independent log of the same queries); None: the production order
CANDIDATES = {"production": None, "ideal (true α)": lambda a, own, other: a, "reversed": lambda a, own, other: -a,
              "PBM, another log": lambda a, own, other: other, "PBM, this log": lambda a, own, other: own}


def _users(user: str, depth: int):
    spec = MODEL_BY_KEY[user]
    return spec, spec.continuation_by_rank(spec.gamma, 1.0, depth)


def simulate_log(user: str, n_sessions: int, *, n_queries: int = 50, depth: int = 10, epsilon: float = 0.3,
                 seed: int = 0, sessions_seed: int | None = None) -> tuple[pd.DataFrame, np.ndarray]:
    """(click table with doc_id = 100·q + d, α as [q, d]) drawn from ``user`` under ε-randomised logging;
    ``sessions_seed``: other sessions of the same queries (α and production order from ``seed``)."""
    rng = np.random.default_rng(seed)
    alpha = rng.uniform(0.05, 0.95, size=(n_queries, depth))
    production = np.argsort(-(alpha + rng.normal(0, 0.25, alpha.shape)), axis=1)
    rng = rng if sessions_seed is None else np.random.default_rng([seed, sessions_seed])
    q = rng.integers(0, n_queries, n_sessions)
    explore = rng.random(n_sessions) < epsilon
    order = np.where(explore[:, None], np.argsort(rng.random((n_sessions, depth)), axis=1), production[q])
    spec, cont = _users(user, depth)
    clicks, _ = spec.sampler(np.take_along_axis(alpha[q], order, axis=1), np.ones((n_sessions, depth), bool),
                             EYE_TRACKING[:depth], gamma=cont, rng=rng)
    frame = pd.DataFrame({"session_id": np.repeat(np.arange(n_sessions), depth), "query_id": np.repeat(q, depth),
                          "doc_id": (order + 100 * q[:, None]).ravel(),
                          "position": np.tile(np.arange(1, depth + 1), n_sessions),
                          "click": clicks.ravel().astype(np.int8)})
    return frame, alpha


def _alpha_by_pair(arrays: SessionArrays, alpha: np.ndarray) -> np.ndarray:
    q = arrays.pair_keys["query_id"].to_numpy()
    return alpha[q, arrays.pair_keys["doc_id"].to_numpy() - 100 * q]


def true_value(user: str, c: cand.Candidate, arrays: SessionArrays, *, alpha: np.ndarray, k: int) -> float:
    """Expected clicks in the candidate's top k under ``user`` with the true α (P(click | examined) as the user model
    says: α, or trust bias's ε⁻ + (ε⁺ − ε⁻)α), over uniformly drawn queries."""
    depth = alpha.shape[1]
    lists = cand.candidate_lists(c.rank, arrays.pair_query, int(arrays.pair_query.max()) + 1, depth=depth)
    a = _alpha_by_pair(arrays, alpha)[lists]
    spec, cont = _users(user, depth)
    exam = spec.cls.examination(a, np.ones(a.shape, bool), EYE_TRACKING[:depth], gamma=cont)
    return float((spec.cls.examined_click(a, cont) * exam)[:, :k].sum(1).mean())


def _fitted_elsewhere(user, n_sessions, epsilon, seed, keys: pd.DataFrame, **log) -> np.ndarray:
    """PBM's attractiveness fitted on an independent log of the same queries, on ``keys``' pairs."""
    frame, _ = simulate_log(user, n_sessions, epsilon=epsilon, seed=seed, sessions_seed=1, **log)
    other = SessionArrays.from_frame(frame, "independent log")
    attr = pd.Series(PBM().fit(other.compress()).attr, index=pd.MultiIndex.from_frame(other.pair_keys))
    return attr.reindex(pd.MultiIndex.from_frame(keys[["query_id", "doc_id"]])).fillna(0.5).to_numpy()


def coverage_rows(user: str, seed: int, *, n_sessions: int = 20_000, epsilon: float = 0.3, k: int = 5,
                  n_boot: int = 100, model: str | None = None, candidates=None, estimators=None, **log) -> list[dict]:
    """One row per (candidate, estimator) of one seeded log: truth, estimate, interval, covered; the direct method
    uses ``model`` (default: the user model when it can, else PBM); ``candidates``: names of :data:`CANDIDATES`
    (default all); ``estimators``: keys (default: the default set)."""
    frame, alpha = simulate_log(user, n_sessions, epsilon=epsilon, seed=seed, **log)
    arrays = SessionArrays.from_frame(frame, f"{user} log")
    t = arrays.compress()
    production = cand.production_rank(t, arrays.pair_query)
    model = model or (user if user in ("pbm", "dcm") else "pbm")
    truth_a, own = _alpha_by_pair(arrays, alpha), PBM().fit(t).attr
    other = _fitted_elsewhere(user, n_sessions, epsilon, seed, arrays.pair_keys, **log)
    rows = []
    for name in candidates or CANDIDATES:
        values = CANDIDATES[name]
        c = (cand.Candidate(name, production, {}) if values is None else
             cand.from_values(values(truth_a, own, other), name, arrays.pair_query, production=production))
        out = value_candidate(arrays, c, model=model, k=k, n_boot=n_boot, seed=seed, t=t, production=production,
                              estimators=estimators)
        truth = true_value(user, c, arrays, alpha=alpha, k=out.k)
        for key, r in out.estimators.items():
            ok = r.estimate is not None
            rows.append({"user": user, "seed": seed, "candidate": name, "estimator": key, "model": model,
                         "truth": truth, "estimate": r.estimate, "lower": r.lower, "upper": r.upper,
                         "covered": bool(ok and r.lower <= truth <= r.upper), "refused": not ok,
                         "logged": out.logged.estimate})
    return rows
