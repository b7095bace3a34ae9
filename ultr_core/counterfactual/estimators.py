r"""The off-policy estimators of a candidate ranking's value on a logged click log — one
:class:`OffPolicyEstimator` record each in :data:`ESTIMATORS`, one signature ``value(setup, fit) -> float``.

The value is the expected number of clicks in the candidate's top k per session, over the log's query mix.  With
θ̂_r the position bias (PBM's examination, fitted on the log), ω(d) = θ̂_{rank of d under the candidate} for the
candidate's top k (0 below), N sessions, n_q of them of query q, c_{s,d} a click on d in session s, shown at r_s(d):

* **DM** (direct method): the fitted click model's expected clicks on each query's candidate list,
  V = Σ_q (n_q/N) Σ_{r≤k} P̂(click at r | the candidate's list);
* **IPS** (Joachims, Swaminathan & Schnabel, WSDM 2017; the position-based form of Oosterhuis, TOIS 2023):
  V = (1/N) Σ_s Σ_d ω(d) c_{s,d} / θ̂_{r_s(d)} — unbiased under PBM users when every document of the candidate's top k
  is shown in every session of its query;
* **SNIPS** (self-normalised per document): R̂(d) = Σ_s c_{s,d}/θ̂_{r_s(d)} / #impressions(d),
  V = Σ_q (n_q/N) Σ_d ω(d) R̂(d) — unbiased under PBM users whenever d is shown at all (a document shown in only
  some sessions is not counted as unclicked in the others; in a bootstrap resample that never shows d, PBM's α̂(d));
* **DR** (doubly robust, position by position — Dudík, Langford & Li, ICML 2011, per slot as Open Bandit Pipeline's
  independent estimators): V = V_PBM + (1/N) Σ_s Σ_{r≤k} 1[d_{s,r} = the candidate's d at r] (c_{s,r} − θ̂_r α̂_d) /
  π̂₀(d at r | q), with π̂₀ the log's share of q's sessions showing d at r and V_PBM the PBM's direct estimate: the
  PBM's prediction, corrected wherever the log shows the candidate's document at the candidate's position;
* **Policy-aware IPS** (Oosterhuis & de Rijke, CIKM 2020; asked for by key): V = (1/N) Σ_s Σ_d ω(d) c_{s,d} / ρ(d),
  ρ(d) = Σ_r π₀(d at r | q) θ̂_r the document's expected examination under the logging policy — unbiased under PBM
  users whenever ρ(d) > 0, however the logging policy moved d between ranks.

DR and policy-aware IPS read π₀ from the log when it carries the logging policy's propensities (a ``propensity``
column: :data:`~ultr_core.clickmodels.sessions.PROPENSITY`), else π̂₀ from its display frequencies — with which DR's
correction cancels the model on every slot shown at its position (DR = the slot's logged clicks there, the model
elsewhere).

Under trust bias a click at r is b_r + s_r·a_d (noise and signal per rank, :func:`~ultr_core.clickmodels.trust.
fit_affine_counts` on the log's (document, rank) counts), so two more records read the clicks through that affine map
(asked for by key; not in the default set):

* **Affine-IPS** (Vardasbi, Oosterhuis & de Rijke, CIKM 2020, the affine correction, as a value):
  V = Σ_q (n_q/N) Σ_{r≤k} b̂_r + (1/N) Σ_s Σ_d ŝ(d) (c_{s,d} − b̂_{r_s(d)}) / ŝ_{r_s(d)}, ŝ(d) the signal at d's
  candidate rank — unbiased under trust-bias users when every candidate document is shown in every session of its
  query;
* **Affine-DR** (Oosterhuis, TOIS 2023, its affine doubly robust form, per position as DR above): the affine model's
  prediction Σ_{r≤k} (b̂_r + ŝ_r â_d), corrected where the log shows the candidate's document at its position.

Affine-DR's value is the same for every member of the affine family of fits (α′ = uα + v, s′ = s/u, b′ = b − sv/u),
so the affine map the log leaves free does not matter; Affine-IPS's is where its unbiasedness condition holds.

>>> [e.key for e in ESTIMATORS]
['dm', 'ips', 'snips', 'dr', 'policy_ips', 'affine_ips', 'affine_dr']
>>> [e.key for e in ESTIMATORS if e.default]
['dm', 'ips', 'snips', 'dr']
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np

from ultr_core.evaluation.intervals import LEVEL, Interval, bootstrap_interval

__all__ = ["OffPolicyEstimator", "FIT_MODELS", "FitModel", "ESTIMATORS", "ESTIMATOR_BY_KEY", "DEFAULT_ESTIMATORS",
           "default_estimators",
           "EstimatorResult", "Setup", "Fit",
           "logged_value", "interval", "LEVEL"]

def interval(point: float, draws: np.ndarray, *, bounds: tuple = (0.0, np.inf), method: str = "percentile",
             sessions: int | None = None) -> Interval:
    """The one interval engine's :class:`~ultr_core.evaluation.intervals.Interval` of ``point`` from the bootstrap
    ``draws`` (``method``: "percentile", or "bc" for an estimator shrunk by a prior; within ``bounds``) over
    resamples of the log's ``sessions``."""
    return bootstrap_interval(point, draws, level=LEVEL, bounds=bounds, method=method,
                              what="bootstrap resample of the sessions", units=sessions)


@dataclass(frozen=True)
class EstimatorResult:
    """One estimator's value of the candidate: its :class:`~ultr_core.evaluation.intervals.Interval` — or, when the
    log cannot support it, ``refused`` with the reason and no interval — the support rule it was held to (``rule``;
    ``support``: the share of the candidate's top-k slots that rule admits, ``support_kind`` its
    :class:`OffPolicyEstimator`'s) and a ``note`` a reader must know (or "")."""

    key: str
    label: str
    cite: str
    formula: str
    support_kind: str
    support: float
    rule: str
    interval: Interval | None = None
    refused: str = ""
    note: str = ""

    @property
    def estimate(self) -> float | None:
        return None if self.interval is None else self.interval.estimate

    @property
    def lower(self) -> float | None:
        return None if self.interval is None else self.interval.lower

    @property
    def upper(self) -> float | None:
        return None if self.interval is None else self.interval.upper

    def to_json(self) -> dict:
        """``{label, cite, formula, support_kind, support, rule}`` and the interval's keys (``estimate``, ``lower``,
        ``upper``, ``level``, ``method``, ``supported``), or ``estimate``/``lower``/``upper`` null and ``refused``;
        ``note`` when there is one — the ``estimators`` entries of ``evaluate --json``."""
        out = {"label": self.label, "cite": self.cite, "formula": self.formula, "support_kind": self.support_kind,
               "support": self.support, "rule": self.rule}
        if self.interval is None:
            out.update(estimate=None, lower=None, upper=None, refused=self.refused)
        else:
            out.update({k: v for k, v in self.interval.to_json().items() if k != "note"})
        if self.note:
            out["note"] = self.note
        return out


@dataclass(frozen=True)
class Setup:
    """What stays fixed over bootstrap resamples: the log's patterns ``t`` (pairs, clicks), each pattern's query
    ``pq``, the cut ``k``, each cell's candidate rank ``crank_cell`` (P, D), each pair's ``crank``, the candidate
    lists ``cand`` (queries × D), ``match`` (P, D): the cell shows the candidate's document at the candidate's
    position (r ≤ k), ``cell`` (P, D): pair·D + r index of (document, position)."""

    t: object
    pq: np.ndarray
    pair_query: np.ndarray
    n_queries: int
    k: int
    crank_cell: np.ndarray
    crank: np.ndarray
    cand: np.ndarray
    match: np.ndarray
    cell: np.ndarray
    #: per query the ranks valued: min(k, the longest list its sessions show)
    kq: np.ndarray | None = None
    #: the logging policy's propensities π₀(d at r | q) the log carries, per cell (pair·D + r; 0 where no session
    #: shows it), or None: the policy-aware estimators then take π̂₀, the log's display frequencies
    propensity: np.ndarray | None = None


@dataclass(frozen=True)
class Fit:
    """One resample's weights ``w`` (P,) and what was fitted on it: PBM's ``theta`` (D,) and ``alpha`` (pairs,), the
    direct model's expected clicks in each query's candidate top k ``dm`` (queries,)."""

    w: np.ndarray
    theta: np.ndarray
    alpha: np.ndarray
    dm: np.ndarray
    mean_attr: float = 0.5
    #: trust bias's affine fit (:class:`~ultr_core.clickmodels.trust.AffineFit`: signal s and noise b per rank, a per
    #: pair), when an estimator needs it
    affine: object | None = None
    #: whether PBM's fit converged (:func:`~ultr_core.counterfactual.position_bias.fit_position_bias`)
    converged: bool = True

    @property
    def n(self) -> float:
        return float(self.w.sum())


def _omega(rank: np.ndarray, theta: np.ndarray, k) -> np.ndarray:
    """ω: θ̂ at the candidate rank within the top k (a number or one cut per item), 0 below."""
    return np.where(rank <= k, theta[np.clip(rank, 1, len(theta)) - 1], 0.0)


def _per_query(s: Setup, f: Fit) -> np.ndarray:
    return np.bincount(s.pq, f.w, s.n_queries)


def dm_value(s: Setup, f: Fit) -> float:
    return float((_per_query(s, f) * f.dm).sum() / f.n)


def ips_value(s: Setup, f: Fit) -> float:
    t = s.t
    ratio = _omega(s.crank_cell, f.theta, s.kq[s.pq][:, None]) / f.theta[None, :]
    return float((f.w[:, None] * t.clicks * ratio).sum() / f.n)


def snips_value(s: Setup, f: Fit) -> float:
    t = s.t
    w = f.w[:, None] * t.mask
    clicks = np.bincount(t.pairs.ravel(), (w * t.clicks / f.theta[None, :]).ravel(), len(s.crank))
    shown = np.bincount(t.pairs.ravel(), w.ravel(), len(s.crank))
    r = np.divide(clicks, shown, out=f.alpha.copy(), where=shown > 0)   # a pair a resample never shows: PBM's α̂
    nq = _per_query(s, f)[s.pair_query]
    return float((nq * _omega(s.crank, f.theta, s.kq[s.pair_query]) * r).sum() / f.n)


def pbm_direct(s: Setup, f: Fit) -> np.ndarray:
    """PBM's expected clicks in each query's candidate top k: Σ_{r≤k} θ̂_r α̂(candidate's d at r)."""
    top = s.cand[:, :s.k]
    a = np.where(top >= 0, f.alpha[np.maximum(top, 0)], 0.0)
    return (a * f.theta[None, :s.k]).sum(1)


def _inverse_propensity(s: Setup, f: Fit) -> np.ndarray:
    """(P, D) 1/π₀(d at r | q) of each cell where the log shows the candidate's document at the candidate's
    position, 0 elsewhere: the logged propensity, or π̂₀ = (the resample's sessions of q showing d at r) / n_q."""
    if s.propensity is not None:
        p = s.propensity[s.cell]
        return np.where(s.match & (p > 0), 1.0 / np.where(p > 0, p, 1.0), 0.0)
    w = f.w[:, None] * s.t.mask
    shown_at = np.bincount(s.cell.ravel(), w.ravel(), len(s.crank) * s.t.depth)[s.cell]     # π̂₀·n_q per cell
    nq = _per_query(s, f)[s.pq][:, None]
    return np.where(s.match & (shown_at > 0), nq / np.maximum(shown_at, 1e-300), 0.0)


def dr_value(s: Setup, f: Fit) -> float:
    t = s.t
    resid = t.clicks - f.theta[None, :] * f.alpha[t.pairs]
    corr = f.w[:, None] * t.mask * resid * _inverse_propensity(s, f)
    return float(((_per_query(s, f) * pbm_direct(s, f)).sum() + corr.sum()) / f.n)


def policy_ips_value(s: Setup, f: Fit) -> float:
    """Policy-aware IPS: each click divided by its document's expected examination under the logging policy,
    ρ(d) = Σ_r π₀(d at r | q) θ̂_r (logged, or π̂₀ from display frequencies)."""
    t, d = s.t, s.t.depth
    if s.propensity is not None:
        pi = s.propensity.reshape(-1, d)
    else:
        shown = np.bincount(s.cell.ravel(), (f.w[:, None] * t.mask).ravel(), len(s.crank) * d).reshape(-1, d)
        pi = shown / np.maximum(_per_query(s, f)[s.pair_query], 1e-300)[:, None]
    rho = pi @ f.theta
    ratio = np.divide(_omega(s.crank, f.theta, s.kq[s.pair_query]), rho, out=np.zeros_like(rho), where=rho > 0)
    return float((f.w[:, None] * t.clicks * t.mask * ratio[t.pairs]).sum() / f.n)


def _affine_base(s: Setup, f: Fit) -> np.ndarray:
    """Per query, Σ over the candidate's top-k slots of the noise b̂_r."""
    exists = s.cand[:, :s.k] >= 0
    return (exists * f.affine.noise[None, :s.k]).sum(1)


def affine_ips_value(s: Setup, f: Fit) -> float:
    t, sig, noise = s.t, f.affine.signal, f.affine.noise
    k = s.kq[s.pq][:, None]
    top = (s.crank_cell >= 1) & (s.crank_cell <= k) & t.mask
    target = sig[np.clip(s.crank_cell, 1, len(sig)) - 1]
    term = np.where(top, target * (t.clicks - noise[None, :]) / sig[None, :], 0.0)
    return float(((_per_query(s, f) * _affine_base(s, f)).sum() + (f.w[:, None] * term).sum()) / f.n)


def affine_dr_value(s: Setup, f: Fit) -> float:
    t, sig, noise, a = s.t, f.affine.signal, f.affine.noise, f.affine.attr
    nq = _per_query(s, f)
    resid = t.clicks - (noise[None, :] + sig[None, :] * a[t.pairs])
    corr = f.w[:, None] * t.mask * resid * _inverse_propensity(s, f)
    top = s.cand[:, :s.k]
    direct = _affine_base(s, f) + (np.where(top >= 0, a[np.maximum(top, 0)], 0.0) * sig[None, :s.k]).sum(1)
    return float(((nq * direct).sum() + corr.sum()) / f.n)


def logged_value(s: Setup, f: Fit) -> float:
    """The log's own clicks in the top k per session."""
    return float((f.w[:, None] * s.t.clicks[:, :s.k]).sum() / f.n)


class FitModel(NamedTuple):
    """How an estimator's notes name the model of its fit: ``name`` ("the PBM") and its possessive ("the PBM's")."""

    name: str
    possessive: str


#: the model each fit kind (:attr:`OffPolicyEstimator.fit`) is, as the support notes name it: DR falls back on the
#: PBM where the log never shows a candidate's document at its position, Affine-DR on the trust-bias model
FIT_MODELS = {"pbm": FitModel("the PBM", "the PBM's"),
              "affine": FitModel("the trust-bias model", "the trust-bias model's")}


@dataclass(frozen=True)
class OffPolicyEstimator:
    """One estimator: ``key``, ``label``, ``cite``, ``formula`` (one line for the page), ``support`` — "any
    position" (needs each candidate document shown somewhere, and the position bias between the two positions
    identified), "at its position" (corrects only where the log shows the candidate's document at the candidate's
    position; elsewhere the model of its ``fit`` decides, which needs the position bias identified) or "model" (the
    click model decides everywhere) — and ``value``."""

    key: str
    label: str
    cite: str
    formula: str
    support: str
    value: Callable
    colour: str = ""
    #: in the estimates every evaluation gives (the others are asked for by key)
    default: bool = True
    #: the fit it reads: "pbm" (θ̂, α̂ and the direct model) or "affine" (trust bias's b̂_r + ŝ_r·â_d) — a key of
    #: :data:`FIT_MODELS`, which names the model its support note says decides the slots it cannot correct
    fit: str = "pbm"
    #: it reads the logging policy's π₀ (the log's ``propensity`` column, else display frequencies)
    reads_propensity: bool = False
    #: in the estimates every evaluation gives of a log that carries its logging policy's propensities
    with_logged: bool = False
    #: its interval (:mod:`ultr_core.evaluation.intervals`): "bc" where a click model's prior shrinks the estimate
    #: (its resamples are shrunk again: DM), else "percentile" (stretched to the estimate where the resamples lie to
    #: one side; DR equals the log's own value on every slot shown at its position, in every resample)
    interval: str = "percentile"


ESTIMATORS = (
    OffPolicyEstimator("dm", "DM", "direct method: the fitted click model predicts the candidate's clicks",
                       "Σ_q (n_q/N) Σ_{r≤k} P̂(click at r | candidate list)", "model", dm_value, "#9467bd",
                       interval="bc"),
    OffPolicyEstimator("ips", "IPS", "Joachims, Swaminathan & Schnabel, WSDM 2017; Oosterhuis, TOIS 2023 (position "
                       "bias)", "(1/N) Σ_s Σ_d ω(d) c_sd / θ̂(r_s(d))", "any position", ips_value, "#1f77b4"),
    OffPolicyEstimator("snips", "SNIPS", "IPS normalised per document by its impressions (self-normalised)",
                       "Σ_q (n_q/N) Σ_d ω(d) [Σ_s c_sd/θ̂(r_s(d))] / impressions(d)", "any position", snips_value,
                       "#17becf"),
    OffPolicyEstimator("dr", "DR", "Dudík, Langford & Li, ICML 2011, per position (Open Bandit Pipeline's "
                       "independent form) around the PBM", "V_PBM + (1/N) Σ_s Σ_{r≤k} 1[candidate's d at r] "
                       "(c − θ̂_r α̂_d) / π̂₀(d at r)", "at its position", dr_value, "#d62728", reads_propensity=True),
    OffPolicyEstimator("policy_ips", "Policy-aware IPS", "Oosterhuis & de Rijke, CIKM 2020 (policy-aware "
                       "propensities: the logging policy's expected examination of each document)",
                       "(1/N) Σ_s Σ_d ω(d) c_sd / Σ_r π₀(d at r) θ̂_r", "any position", policy_ips_value, "#ff7f0e",
                       default=False, reads_propensity=True, with_logged=True),
    OffPolicyEstimator("affine_ips", "Affine-IPS", "Vardasbi, Oosterhuis & de Rijke, CIKM 2020, the affine "
                       "correction (trust bias)",
                       "Σ_q (n_q/N) Σ_{r≤k} b̂_r + (1/N) Σ_s Σ_d ŝ(d) (c_sd − b̂(r_s(d))) / ŝ(r_s(d))", "any position",
                       affine_ips_value, "#2ca02c", default=False, fit="affine"),
    OffPolicyEstimator("affine_dr", "Affine-DR", "Oosterhuis, TOIS 2023, affine doubly robust (trust bias), per "
                       "position", "V_affine + (1/N) Σ_s Σ_{r≤k} 1[candidate's d at r] (c − b̂_r − ŝ_r â_d) / "
                       "π̂₀(d at r)", "at its position", affine_dr_value, "#8c564b", default=False, fit="affine",
                       reads_propensity=True),
)
ESTIMATOR_BY_KEY = {e.key: e for e in ESTIMATORS}
DEFAULT_ESTIMATORS = tuple(e.key for e in ESTIMATORS if e.default)


def default_estimators(*, logged: bool, affine: bool = False) -> tuple:
    """The estimators an evaluation gives when none are named: the default set, those a log with its logging
    policy's propensities adds (``logged``), and trust bias's (``affine``) — in the table's order.

    >>> default_estimators(logged=True, affine=True)
    ('dm', 'ips', 'snips', 'dr', 'policy_ips', 'affine_ips', 'affine_dr')
    """
    return tuple(e.key for e in ESTIMATORS if e.default or (logged and e.with_logged)
                 or (affine and e.fit == "affine"))
