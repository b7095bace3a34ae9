"""Parameter recovery (issue #34, item 6): logs drawn from one user model with known parameters, the zoo refitted
and scored on held-out sessions — does the generating model explain its own clicks best?

Every session shows one of ``n_queries`` queries' ``depth`` documents in a uniformly random order, so that each
document is seen at every position: with one fixed order per query, attractiveness and examination could not be
told apart (the identifiability graph of such a log has one component per position — Identifiability Matters §3),
and no model's bias parameters would be recoverable.  Attractiveness α ~ U(0.05, 0.95) per document, the position
curve is the eye-tracking curve, γ the model's default (DCM: λ_r = γ/r, the simulator's rule at η = 1).

>>> f = sample_sessions("dbn", 4, n_queries=2, depth=3, seed=0)
>>> list(f.columns), len(f), sorted(f.groupby("session_id")["position"].apply(list).iloc[0])
(['session_id', 'query_id', 'doc_id', 'position', 'click'], 12, [1, 2, 3])
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ultr_core.clickmodels.registry import MODEL_BY_KEY
from ultr_core.clickmodels.samplers import EYE_TRACKING
from ultr_core.evaluation.intervals import bootstrap_intervals

__all__ = ["sample_sessions", "true_attractiveness", "recovery_scores", "fitted_vs_generating", "pbm_curve_bootstrap",
           "bootstrap_coverage"]

#: the eye-tracking examination curve (Joachims et al. 2005) of :mod:`ultr_core.simulation`
_EYE = EYE_TRACKING                 #: the examination every recovery log is drawn with


def true_attractiveness(n_queries: int, depth: int, seed: int) -> np.ndarray:
    """α of document ``d`` of query ``q`` (``[q, d]``), drawn first from the log's generator."""
    return np.random.default_rng(seed).uniform(0.05, 0.95, size=(n_queries, depth))


def sample_sessions(model: str, n_sessions: int, *, n_queries: int = 50, depth: int = 10, seed: int = 0,
                    gamma: float | None = None) -> pd.DataFrame:
    """A click log (session_id, query_id, doc_id = 100·q + d, position, click) drawn from ``model``."""
    rng = np.random.default_rng(seed)
    attract = rng.uniform(0.05, 0.95, size=(n_queries, depth))        # = true_attractiveness(…, seed)
    q = rng.integers(0, n_queries, n_sessions)
    order = np.argsort(rng.random((n_sessions, depth)), axis=1)       # each session in a random order
    a = np.take_along_axis(attract[q], order, axis=1)
    spec = MODEL_BY_KEY[model]
    cont = spec.continuation_by_rank(spec.gamma if gamma is None else gamma, 1.0, depth)     # η = 1
    clicks, _ = spec.sampler(a, np.ones_like(a, bool), _EYE[:depth], gamma=cont, rng=rng)
    return pd.DataFrame({"session_id": np.repeat(np.arange(n_sessions), depth), "query_id": np.repeat(q, depth),
                         "doc_id": (order + 100 * q[:, None]).ravel(), "position": np.tile(np.arange(1, depth + 1),
                                                                                            n_sessions),
                         "click": clicks.ravel().astype(np.int8)})


def recovery_scores(model: str, n_sessions: int, *, seed: int = 0, split: float = 0.75) -> dict:
    """Held-out log-likelihood of every model of the zoo on a log drawn from ``model``: ``{"scores": {key: LL},
    "best": key, "gap": LL(best) − LL(model)}``."""
    from ultr_core.clickmodels.compare import compare_click_models
    out = compare_click_models(sample_sessions(model, n_sessions, seed=seed), f"{model} sample", split=split)
    ll = {k: v.log_likelihood for k, v in out.models.items()}
    best = max(ll, key=ll.get)
    return {"scores": ll, "best": best, "gap": ll[best] - ll[model], "test_sessions": out.test_sessions}


def fitted_vs_generating(model: str, n_sessions: int, *, seed: int = 0, split: float = 0.75) -> dict:
    """For DBN and CCM (fitted by EM): the held-out log-likelihood of the fitted model and of the same model with
    the parameters the log was drawn with (α, σ = α, γ; or α and τ = (γ, γ, γ/2)), and the fitted continuation —
    whether the likelihood and the sampler agree, and how far EM is from the generating parameters."""
    from ultr_core.clickmodels.evaluation import scores
    from ultr_core.clickmodels.sessions import SessionArrays, split_sessions
    f = sample_sessions(model, n_sessions, seed=seed)
    s = SessionArrays.from_frame(f, model)
    train, test, _ = split_sessions(s, split)
    t_train, t_test = train.compress(), test.compress()
    spec = MODEL_BY_KEY[model]
    fitted = spec.cls().fit(t_train)
    out = {"fitted": scores(fitted, t_test)["log_likelihood"], "fitted_bias": fitted.bias()}
    q, d = s.pair_keys["query_id"].to_numpy(), s.pair_keys["doc_id"].to_numpy()
    alpha = true_attractiveness(int(q.max()) + 1, 10, seed)[q, d - 100 * q]
    true = spec.cls().use_generating(alpha, spec.gamma)
    out["generating"] = scores(true, t_test)["log_likelihood"]
    return out


def pbm_curve_bootstrap(n_sessions: int, n_boot: int = 20, seed: int = 0) -> dict:
    """PBM refitted on ``n_boot`` session bootstraps of a PBM log: the examination ratios γ_p/γ_1 (PBM fixes
    α·γ only, so the scale is not identifiable) with 90 % percentile intervals (the one interval
    engine) beside the generating curve's."""
    from ultr_core.clickmodels.models import PBM
    from ultr_core.clickmodels.sessions import SessionArrays
    s = SessionArrays.from_frame(sample_sessions("pbm", n_sessions, seed=seed), "pbm")
    rng = np.random.default_rng([seed, 9])
    fits = np.array([PBM().fit(s.subset(rng.integers(0, s.n_sessions, s.n_sessions)).compress()).exam
                     for _ in range(n_boot)])
    ratios = fits / fits[:, :1]
    est = PBM().fit(s.compress()).exam
    lo, hi, _ = bootstrap_intervals(est / est[0], ratios)
    return {"truth": _EYE[:s.depth] / _EYE[0], "estimate": est / est[0], "lo": lo, "hi": hi}


def _truth(model: str, s, seed: int, depth: int) -> dict:
    """The generating value of each identifiable parameter family, in the fitted model's layout (ratios where the
    model fixes only α·γ): the model class's ``generating``."""
    q, d = s.pair_keys["query_id"].to_numpy(), s.pair_keys["doc_id"].to_numpy()
    alpha = true_attractiveness(int(q.max()) + 1, depth, seed)[q, d - 100 * q]
    spec = MODEL_BY_KEY[model]
    return spec.cls.generating(alpha, _EYE[:depth], spec.gamma)


def bootstrap_coverage(model: str, *, n_sessions: int = 20_000, n_boot: int = 20, seed: int = 0) -> list[dict]:
    """For PBM, UBM (examination ratios), CM, SDBN (attractiveness), DCM (attractiveness, λ), DBN (attractiveness,
    satisfaction, γ) and CCM (attractiveness, τ): the share of the generating values inside their 90 %
    session-bootstrap intervals and the largest error of the fit."""
    from ultr_core.clickmodels.sessions import SessionArrays
    s = SessionArrays.from_frame(sample_sessions(model, n_sessions, seed=seed), model)
    truth = _truth(model, s, seed, s.depth)
    cls = MODEL_BY_KEY[model].cls
    rng = np.random.default_rng([seed, 11])
    boots = [cls().fit(s.subset(rng.integers(0, s.n_sessions, s.n_sessions)).compress()) for _ in range(n_boot)]
    full = cls().fit(s.compress())
    rows = []
    for name, t in truth.items():
        est = full.recovered(name)
        b = np.array([m.recovered(name) for m in boots])
        lo, hi, _ = bootstrap_intervals(np.ravel(est), b.reshape(len(b), -1))
        lo, hi = lo.reshape(np.shape(est)), hi.reshape(np.shape(est))
        keep = ~np.isnan(t) & ~((t == 1) & (lo == 1) & (hi == 1))         # the reference cell is 1 by definition
        rows.append({"model": MODEL_BY_KEY[model].label, "parameter": name, "values": int(keep.sum()),
                     "covered": float(((lo[keep] - 1e-9 <= t[keep]) & (t[keep] <= hi[keep] + 1e-9)).mean()),
                     "max_error": float(np.abs(est[keep] - t[keep]).max())})
    return rows
