"""Top-k selection bias: CLD (pointwise Tobit), CLD_pair, Heckman_rank and RankAgg.

All four read the log at the level of (query, candidate) pairs: ``s = 1`` when the logging
ranker placed the candidate in the top k (it was shown), ``s = 0`` for the candidates below
the cut-off, and for selected pairs the propensity-re-weighted click signal
ĉ/ρ = (mean clicks over the sessions that showed it) / ρ_k, with ρ_k the examination
probability of its position k.  As the CLD paper does (§6), ρ is treated as known: the log's
own click model, or an assumed severity η′ (``cld_rho_eta``; RQ4's misspecification).

The official code (github hyz20/CLD, commit f1227bd) is the default reading: pointwise CLD on one row
per (session, candidate) with the logistic link (``cld_form="official"``, :class:`CLD`,
:func:`session_rows`), CLD_pair on its per-session pairs (:mod:`.cld_pair`); eq. 10 as printed stays
as ``cld_form="paper_text"``.  Heckman_rank follows Ovaisi et al. by default, the official CLD code's
logistic variant is ``heckman="official"``.  Every difference is in docs/conventions.md.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ultr_core.algorithms.batches import SelectionBatch, TrainContext
from ultr_core.algorithms.cld_pair import pair_batches
from ultr_core.algorithms.config import TrainConfig
from ultr_core.algorithms.data import SessionData
from ultr_core.algorithms.loop import FitResult, train_loop
from ultr_core.algorithms.models import ranker
from ultr_core.data.dataset import RankingData
from ultr_core.errors import ConfigError
from ultr_core.simulation.clickmodel import position_observation

__all__ = ["fit_selection", "SelectionJob", "fit_heckman", "fit_rankagg", "fit_cld", "fit_cld_pair", "candidate_table",
           "session_rows", "cld_loss", "check_selection_log"]


@dataclass
class CandidateTable:
    """One row per distinct (session list, candidate) of the log, i.e. per (query, row)."""

    rows: np.ndarray        # dataset split row (features)
    query: np.ndarray       # query index (0..Q-1) for pair construction
    selected: np.ndarray    # s
    position: np.ndarray    # 1-based logged position
    ctr: np.ndarray         # mean clicks over the sessions that logged it (0 for unselected)
    target: np.ndarray      # ĉ/ρ for selected, 0 for unselected
    n_sessions: np.ndarray  # sessions in which it was a candidate (Heckman's stage-2 weights)


def candidate_table(data: SessionData, rho: np.ndarray) -> CandidateTable:
    """Aggregate sessions into (query, candidate) rows (vectorised)."""
    m = data.candidate
    rows = data.rows[m]
    pos = np.nonzero(m)[1] + 1
    shown = data.shown[m]
    clicks = data.clicks[m].astype(np.float64)
    uniq, inv = np.unique(rows, return_inverse=True)
    n = np.bincount(inv)
    c = np.bincount(inv, weights=clicks) / n
    sel = np.bincount(inv, weights=shown) > 0
    position = np.zeros(len(uniq), np.int64)
    position[inv] = pos                      # a candidate keeps its position (fixed logging ranker)
    r = np.maximum(rho[np.minimum(position, len(rho)) - 1], 1e-6)
    target = np.where(sel, c / r, 0.0)
    # query of each candidate: sessions of one query share the list, so the first row's session
    first_session = np.zeros(len(uniq), np.int64)
    sess_of = np.nonzero(m)[0]
    first_session[inv[::-1]] = sess_of[::-1]
    list_key = data.rows[first_session].min(axis=1, initial=np.iinfo(np.int64).max, where=data.candidate[first_session])
    query = np.unique(list_key, return_inverse=True)[1]
    return CandidateTable(uniq, query, sel, position, c, target.astype(np.float32), n)


def session_rows(data: SessionData, rho: np.ndarray):
    """One row per (session, candidate), as the official CLD code trains (``train_alg/ips_tobit.py``:
    a row of ``Train_log`` per session and candidate): (split row, selected s, target w·c) with
    w = 1/ρ_position the propensity weight and c the session's click (0 for unselected rows)."""
    m = data.candidate
    pos = np.nonzero(m)[1] + 1
    shown = data.shown[m].astype(bool)
    w = 1.0 / np.maximum(rho[np.minimum(pos, len(rho)) - 1], 1e-6)
    target = np.where(shown, data.clicks[m] * w, 0.0).astype(np.float32)
    return data.rows[m], shown, target


def cld_loss(xb, xw, selected, *, target, gamma: float, form: str = "paper_text"):
    """The negative log-likelihood of pointwise CLD (mean over rows), with f_β = ``xb``, f_ω = ``xw``
    and r = target − f_β:

    * ``paper_text`` (eq. 10 as printed): s·[r² − log Φ((f_ω + γ r)/√(1−γ²))] + (1−s)·[− log Φ(−f_ω)];
    * ``official`` (hyz20/CLD ``models/loss_func.py`` TobitLoss): the same with the **logistic** link,
      s·[r² − log σ((f_ω + ρ r)/√(1−ρ²))] + (1−s)·[− log σ(−f_ω)] (the code writes −log(1 − σ(f_ω) + 10⁻⁸);
      log σ(−f_ω) is the same without the ε, stable in the tails).

    >>> import torch
    >>> l = cld_loss(torch.tensor([0.5, 0.0]), torch.tensor([0.2, -1.0]), torch.tensor([True, False]),
    ...              target=torch.tensor([1.5, 0.0]), gamma=0.5, form="official")
    >>> round(float(l), 4)        # r = 1: ((1 − log σ((0.2 + 0.5·1)/√0.75)) + (−log σ(1))) / 2
    0.8409
    """
    resid = target - xb
    scale = float(np.sqrt(1 - gamma * gamma))
    if form == "official":
        sel = resid ** 2 - F.logsigmoid((xw + gamma * resid) / scale)
        unsel = -F.logsigmoid(-xw)
    else:
        sel = resid ** 2 - torch.special.log_ndtr((xw + gamma * resid) / scale)
        unsel = -torch.special.log_ndtr(-xw)
    return torch.where(selected, sel, unsel).mean()


def _rho(config: TrainConfig, context: TrainContext, n: int) -> np.ndarray:
    if config.cld_rho_eta is None and config.propensity == "estimated":
        est = np.nan_to_num(np.asarray(context.propensity, np.float64))
        return np.r_[est, np.zeros(max(n - len(est), 0))][:n]       # positions past top-k: never examined
    cm = context.click_model
    eta = config.cld_rho_eta if config.cld_rho_eta is not None else cm.get("eta", 1.0)
    return position_observation(n, eta=eta, convention=cm.get("convention", "eye_tracking"))


class CLD(nn.Module):
    """CLD, pointwise (eq. 10, Algorithm 1): linear relevance β and linear selection ω.  Default
    (``cld_form="official"``): the official TobitLoss on per-(session, candidate) rows with the
    logistic link and ρ = ``cld_gamma`` (:func:`cld_loss`).  ``"paper_text"``: eq. 10 as printed,
    maximising
        −Σ_{s=1} (ĉ/ρ − xᵀβ)² + Σ_{s=1} log Φ((xᵀω + γ(ĉ/ρ − xᵀβ))/√(1−γ²)) + Σ_{s=0} log(1 − Φ(xᵀω)),
    with γ a hyper-parameter.  Selected rows reach both models through the first two terms,
    unselected rows only ω through the third (Algorithm 1, lines 7–10).  log Φ is computed
    with ``torch.special.log_ndtr`` (stable in both tails); log(1 − Φ(z)) = log Φ(−z).
    The ranking score is xᵀβ (§4.3).  β uses the configured model (linear in the paper)."""

    def __init__(self, config: TrainConfig, n_features: int):
        super().__init__()
        self.beta = ranker(config, n_features)
        self.omega = nn.Linear(n_features, 1)
        self.gamma = config.cld_gamma
        self.form = config.cld_form

    def score(self, X):
        return self.beta(X).squeeze(-1)

    def loss(self, b):
        X = b.X
        objective = cld_loss(self.score(X), self.omega(X).squeeze(-1), b.selected, target=b.target, gamma=self.gamma,
                             form=self.form)
        return objective, {"loss": float(objective.detach())}

    def observation(self):
        return None


def probit_mle(A: np.ndarray, y: np.ndarray, *, weight: np.ndarray | None = None, ridge: float = 1e-4) -> np.ndarray:
    """Coefficients w maximising the (weighted) probit log-likelihood
    Σ_i u_i [y_i log Φ(a_iᵀw) + (1 − y_i) log Φ(−a_iᵀw)] / Σ u_i − ridge·‖w‖² (y may be a rate in
    [0, 1]: u_i sessions of which a share y_i clicked).  L-BFGS in float64; log Φ by ``log_ndtr``."""
    At = torch.from_numpy(np.asarray(A, np.float64))
    yt = torch.from_numpy(np.asarray(y, np.float64))
    ut = torch.from_numpy(np.ones(len(y)) if weight is None else np.asarray(weight, np.float64))
    w = torch.zeros(At.shape[1], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w], max_iter=500, tolerance_grad=1e-10, tolerance_change=1e-14,
                            line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        z = At @ w
        ll = ut * (yt * torch.special.log_ndtr(z) + (1 - yt) * torch.special.log_ndtr(-z))
        nll = -ll.sum() / ut.sum() + ridge * (w ** 2).sum()
        nll.backward()
        return nll
    opt.step(closure)
    return w.detach().numpy()


def logistic_over_1_6(A: np.ndarray, y: np.ndarray, weight: np.ndarray, *, max_iter: int) -> np.ndarray:
    """The official CLD code's stand-in for a probit (``train_alg/heckman.py: _probit``): scikit-learn
    ``LogisticRegression(solver="lbfgs", C=1)`` with at most ``max_iter`` iterations, its
    coefficients divided by 1.6 and its intercept dropped.  Rows may carry ``weight`` (impressions).

    >>> A = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> bool(logistic_over_1_6(A, np.array([0, 0, 1, 1]), np.ones(4), max_iter=100)[0] > 0)
    True
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    keep = np.asarray(weight) > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)       # max_iter = 40 stops early, as the official run
        clf = LogisticRegression(C=1.0, solver="lbfgs", max_iter=max_iter).fit(
            A[keep], np.asarray(y)[keep].astype(int), sample_weight=np.asarray(weight)[keep])
    return clf.coef_.ravel() / 1.6


class Heckman:
    """Heckman_rank (Ovaisi et al., WWW 2020; github:edgeslab/heckman_rank ``evaluation/heckman.py``).

    Stage 1: a probit selection model P(s = 1 | x) = Φ(xᵀω + ω₀) on every candidate.  Stage 2
    (``variant="ovaisi"``, default): a probit of the clicks on [x, λ(x)] over **all** candidates
    (unselected ones never clicked), with the inverse Mills ratio λ(x) = φ(xᵀω)/Φ(xᵀω); documents
    are ranked by the outcome part xᵀβ only — the Mills term is dropped at ranking, as the
    official ``eval`` does.  The clicks enter as each candidate's click rate weighted by its
    sessions (= the official per-impression rows).  Differences from the official code: an exact
    probit MLE (it uses logistic regression coefficients / 1.6, L2 C = 1, intercept dropped).
    ``variant="official"``: the official CLD code's ``train_alg/heckman.py`` — both stages are
    :func:`logistic_over_1_6` (scikit-learn logistic regression, C = 1, its intercept fitted and then
    dropped, also inside λ), ``max_iter`` = the official epoch count 40 (100 in RankAgg,
    ``train_alg/rankagg.py``, which leaves it at scikit-learn's default), ranked by xᵀβ.
    ``variant="ls_mills"``: this project's earlier variant — ridge least squares of the click rate
    of the selected candidates on [x, 1, λ(x)], scored with the Mills term.  Both correct selection
    only (no propensity weighting), as in the paper."""

    def __init__(self, X, tab: CandidateTable, variant: str = "ovaisi", ridge: float = 1e-3, max_iter: int = 40):
        Xc = X[tab.rows].astype(np.float64)
        A = np.c_[Xc, np.ones(len(Xc))]
        self.variant = variant
        if variant == "official":
            n = tab.n_sessions.astype(np.float64)
            gamma = logistic_over_1_6(Xc, tab.selected, n, max_iter=max_iter)
            Z = np.c_[Xc, self._mills(Xc @ gamma)]
            clicks = tab.ctr * n                          # per-impression rows, aggregated as weights
            self.theta = logistic_over_1_6(np.r_[Z, Z], np.r_[np.ones(len(Z)), np.zeros(len(Z))],
                                           np.r_[clicks, n - clicks], max_iter=max_iter)
            return
        self.omega = probit_mle(A, tab.selected.astype(np.float64))
        mills = self._mills(A @ self.omega)
        if variant == "ovaisi":
            self.theta = probit_mle(np.c_[A, mills], tab.ctr, weight=tab.n_sessions)
            return
        sel = tab.selected
        Z = np.c_[A[sel], mills[sel]]
        self.theta = np.linalg.solve(Z.T @ Z + ridge * np.eye(Z.shape[1]), Z.T @ tab.ctr[sel])

    @staticmethod
    def _mills(z):
        from scipy.stats import norm
        return np.exp(norm.logpdf(z) - norm.logcdf(z))

    def scores(self, X):
        """Ranking scores: xᵀβ (``ovaisi``) or [x, 1, λ(x)]ᵀθ (``ls_mills``)."""
        X = np.asarray(X, np.float64)
        if self.variant in ("ovaisi", "official"):
            return X @ self.theta[:X.shape[1]]
        A = np.c_[X, np.ones(len(X))]
        return np.c_[A, self._mills(A @ self.omega)] @ self.theta


class ClosedFormRanker(nn.Module):
    """Adapter giving Heckman / RankAgg the ranker interface of :class:`FitResult`."""

    def __init__(self, heckman: Heckman, ips: FitResult | None = None):
        super().__init__()
        self.heckman, self.ips = heckman, ips

    def score(self, X):
        return torch.as_tensor(self.heckman.scores(X.numpy()))

    def predict_lists(self, X, offsets):
        h = self.heckman.scores(X)
        if self.ips is None:
            return h
        return borda(np.c_[self.ips.predict(X), h], offsets)

    def observation(self):
        return None if self.ips is None else self.ips.observation()


def borda(scores: np.ndarray, offsets: np.ndarray | None) -> np.ndarray:
    """RankAgg rule: Borda count per query — each ranker gives a document (n − rank) points
    (rank 1 = its top document), the aggregate score is the sum; ties keep stored order."""
    n = len(scores)
    offsets = np.array([0, n]) if offsets is None else np.asarray(offsets)
    total = np.zeros(n)
    for col in scores.T:
        for a, b in zip(offsets[:-1], offsets[1:]):
            order = np.argsort(-col[a:b], kind="stable")
            pts = np.empty(b - a)
            pts[order] = np.arange(b - a, 0, -1)
            total[a:b] += pts
    return total


def check_selection_log(configs, log) -> None:
    """Refuse, before anything trains, a top-k selection method (``needs_topk`` in the algorithm table) on a log
    that shows every candidate: it has no unselected candidate to model (issue #50: the failure came from the
    worker and wiped the page's earlier results)."""
    from ultr_core.algorithms.specs import SPECS_BY_KEY
    if "shown" not in log.frame or not bool(log.frame["shown"].all()):
        return
    names = [c.display_name for c in configs if SPECS_BY_KEY[c.algorithm].needs_topk]
    if names:
        raise ConfigError("topk", f"{', '.join(names)} model{'s' if len(names) == 1 else ''} top-k selection, but "
                                  "this log shows every candidate: simulate with a top-k cut-off (Simulate page, "
                                  "'show only the top k') or choose other methods")


@dataclass
class SelectionJob:
    """What a selection method's fitter reads: the data, its config and context, the candidate table at the ρ of
    its propensities, and (RankAgg) the fitted ranker it aggregates."""

    dataset: object
    split: RankingData
    data: SessionData
    config: TrainConfig
    context: TrainContext
    tab: object
    rho: np.ndarray
    on_step: object = None
    stop: object = None
    ips: FitResult | None = None


def fit_selection(log, dataset, split: RankingData, *, data: SessionData, config: TrainConfig, context: TrainContext,
                  on_step=None, stop=None, ips: FitResult | None = None) -> FitResult:
    """Fit a top-k selection model (called by :func:`ultr_core.algorithms.fit`): the candidate table, then the
    method's own fitter, the ``learner`` of its record in the algorithm table (RankAgg receives the fitted ranker
    it aggregates, its record's ``aggregates``, as ``ips``)."""
    from ultr_core.algorithms.registry import resolve
    from ultr_core.algorithms.specs import SPECS_BY_KEY
    rho = _rho(config, context, data.rows.shape[1])
    tab = candidate_table(data, rho)
    if tab.selected.all():
        raise ConfigError("topk", f"{config.display_name} models top-k selection: simulate with a cut-off k "
                                  "so that some candidates are never shown")
    job = SelectionJob(dataset, split, data, config, context, tab, rho, on_step, stop, ips)
    return resolve(SPECS_BY_KEY[config.algorithm].learner)(job)


def fit_heckman(job: SelectionJob) -> FitResult:
    """Heckman_rank (Ovaisi et al. 2020): the probit selection, then the outcome model, in closed form."""
    return _closed_form(job, Heckman(job.split.features, job.tab, job.config.heckman, max_iter=40))


def fit_rankagg(job: SelectionJob) -> FitResult:
    """RankAgg (Ovaisi et al. 2020): Borda aggregation of the fitted IPS ranker and Heckman_rank."""
    if job.ips is None:
        raise ConfigError("algorithm", "RankAgg needs the fitted IPS ranker (ultr_core.algorithms.fit passes it)")
    return _closed_form(job, Heckman(job.split.features, job.tab, job.config.heckman, max_iter=100), job.ips)


def _closed_form(job: SelectionJob, heck: Heckman, ips: FitResult | None = None) -> FitResult:
    from ultr_core.evaluation.metrics import ndcg
    res = FitResult(job.config, ClosedFormRanker(heck, ips))
    v = job.dataset.valid
    sv = res.predict(v.features, v.offsets)
    rec = {"step": 1, "loss": 0.0, "valid_ndcg@10": ndcg(sv, v.labels, v.offsets, k=10),
           "valid_ndcg@3": ndcg(sv, v.labels, v.offsets, k=3), "observation": None}
    res.history.append(rec)
    if job.on_step is not None:
        job.on_step(rec)
    return res


def fit_cld(job: SelectionJob) -> FitResult:
    """CLD (eq. 10, Algorithm 1): the Tobit loss on one row per (session, candidate), or per candidate as printed."""
    config, rng, tab = job.config, job.context.rng, job.tab
    X_all = torch.from_numpy(job.split.features)
    learner = CLD(config, job.split.n_features)
    rows, sel, tgt = ((tab.rows, tab.selected, tab.target) if config.cld_form == "paper_text"
                      else session_rows(job.data, job.rho))       # official: one row per (session, candidate)
    n = len(rows)
    sel_t, tgt_t = torch.from_numpy(sel), torch.from_numpy(tgt)

    def next_batch():
        idx = rng.integers(0, n, size=min(config.batch_size * 4, n))
        return SelectionBatch(X_all[torch.from_numpy(rows[idx])], sel_t[idx], tgt_t[idx])
    return train_loop(learner, config, next_batch, valid=job.dataset.valid, on_step=job.on_step, stop=job.stop)


def fit_cld_pair(job: SelectionJob) -> FitResult:
    """CLD_pair (eq. 13, Algorithm 2): pair batches of the candidate table."""
    X_all = torch.from_numpy(job.split.features)
    learner, next_batch = pair_batches(job.config, job.data, job.tab, rho=job.rho, rng=job.context.rng, X_all=X_all)
    return train_loop(learner, job.config, next_batch, valid=job.dataset.valid, on_step=job.on_step, stop=job.stop)
