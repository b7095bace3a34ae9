"""The learning algorithms.  Each is a small class with one job: its loss on a batch.

Shared pieces: :func:`listwise_softmax` (the softmax cross-entropy list loss of ULTRA,
DLA and LBD) and the :class:`Learner` base (ranking model, optimiser parameter groups,
observation estimate).  The training loop (``training.py``) builds the optimiser once.

Batches hold ``X`` (B, L, F) features, ``shown`` (B, L), ``clicks`` (B, L) and, when the log
has it, ``labels`` (B, L) true grades (Oracle only).

Position-based learners are here; the individual-level ones (LBD, Vectorization, HTE) are in
:mod:`.individual`, and :mod:`.registry` maps algorithm names to classes.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ultr_core.algorithms.batches import Batch, TrainContext
from ultr_core.algorithms.config import TrainConfig
from ultr_core.algorithms.models import ranker
from ultr_core.simulation.clickmodel import position_observation

NEG = -1e9


def listwise_softmax(logits, targets, mask, *, weights=None):
    """Mean over lists with a positive target of −Σ_i w_i t_i log softmax(logits)_i
    (masked entries excluded from the softmax)."""
    logp = torch.log_softmax(logits.masked_fill(~mask, NEG), dim=1)
    t = targets * mask
    if weights is not None:
        t = t * weights
    per_list = -(t * logp).sum(dim=1)
    has = (targets * mask).sum(dim=1) > 0
    return per_list[has].sum() / has.sum().clamp(min=1)


def pairwise_bpr(scores, values, mask):
    """Mean over the ordered pairs of each list with Δ = v_i − v_j > 0 (both entries shown) of
    Δ·(−log σ(s_i − s_j)): the official CLD code's pairwise Naive / IPS (``models/loss_func.py:
    BPRLoss`` weighted by ``rel_diff``, on pairs built per session and ordered by click × weight).

    >>> import torch
    >>> l = pairwise_bpr(torch.tensor([[1.0, 0.0, 0.5]]), torch.tensor([[2.0, 0.0, 0.0]]),
    ...                  torch.tensor([[True, True, False]]))
    >>> round(float(l), 4)      # one pair (1st, 2nd) with Δ = 2: 2·log(1 + e^(−1))
    0.6265
    """
    v = values * mask
    delta = v[:, :, None] - v[:, None, :]
    pair = (delta > 0) & mask[:, :, None] & mask[:, None, :]
    lij = F.softplus(-(scores[:, :, None] - scores[:, None, :]))
    return (delta * lij * pair).sum() / pair.sum().clamp(min=1)


class Learner(nn.Module):
    """Base: a ranking model ``f`` scoring features; subclasses add observation models."""

    uses_labels = False           #: trains on true labels (Oracle)
    needs_clicks = True           #: sessions without clicks carry no signal for its loss
    sees_candidates = False       #: its lists hold every logged candidate, shown or not (policy-aware methods)

    def __init__(self, cfg: TrainConfig, n_features: int, n_positions: int, context: TrainContext):
        super().__init__()
        self.cfg, self.n_positions, self.context = cfg, n_positions, context
        self.f = ranker(cfg, n_features)

    def score(self, X):
        return self.f(X).squeeze(-1)

    def loss(self, b: Batch) -> tuple[torch.Tensor, dict]:
        raise NotImplementedError

    def observation(self) -> np.ndarray | None:
        """Current estimate of the observation curve per position (None if the method has none)."""
        return None

    def tau_weights(self, b):
        """HTE click weights 1/τ (clipped at ``max_weight``) when the batch carries ``tau``, else None."""
        if b.tau is None:
            return None
        return (1.0 / b.tau.clamp(min=1e-6)).clamp(max=self.cfg.max_weight or float("inf"))


class Naive(Learner):
    """"Click Data": listwise softmax cross-entropy on raw clicks (no debiasing); with
    ``ips_form="pairwise"`` the official CLD code's BPR on click-ordered pairs (:func:`pairwise_bpr`)."""

    def loss(self, b):
        if self.cfg.ips_form == "pairwise":
            objective = pairwise_bpr(self.score(b.X), b.clicks, b.shown)
        else:
            objective = listwise_softmax(self.score(b.X), b.clicks, b.shown)
        return objective, {"loss": float(objective.detach())}


class Oracle(Learner):
    """"Labeled Data": the same listwise loss on true gains 2^y − 1 (an upper bound)."""

    uses_labels = True
    needs_clicks = False

    def loss(self, b):
        gains = 2.0 ** b.labels - 1
        objective = listwise_softmax(self.score(b.X), gains, b.shown)
        return objective, {"loss": float(objective.detach())}


class IPS(Learner):
    """Inverse propensity scoring (Joachims et al., WSDM 2017; Wang et al. 2016): clicks in the
    listwise loss weighted by ô_1/ô_p with known propensities (the log's true curve) or a
    misspecified assumption o_p = v_p^η′ (``ips_eta``, CLD's RQ4); weights clipped at ``max_weight``.
    ``ips_form="pairwise"``: the official CLD code's IPS — :func:`pairwise_bpr` on v = c·w."""

    def __init__(self, cfg, n_features, n_positions, context):
        super().__init__(cfg, n_features, n_positions, context)
        if cfg.ips_eta is None:
            o = context.true_propensity if context.propensity is None else context.propensity
            if o is None:
                raise ValueError("IPS with true propensities needs a simulated log; set ips_eta")
        else:
            o = position_observation(n_positions, eta=cfg.ips_eta, convention=context.convention)
        o = np.maximum(np.asarray(o, np.float64)[:n_positions], 1e-6)
        self.register_buffer("prop", torch.tensor(o / o[0], dtype=torch.float32))

    def loss(self, b):
        L = b.X.shape[1]
        w = (1.0 / self.prop[:L]).clamp(max=self.cfg.max_weight or float("inf"))
        if self.cfg.ips_form == "pairwise":
            objective = pairwise_bpr(self.score(b.X), b.clicks * w[None, :], b.shown)
            return objective, {"loss": float(objective.detach())}
        objective = listwise_softmax(self.score(b.X), b.clicks, b.shown, weights=w[None, :])
        return objective, {"loss": float(objective.detach())}

    def observation(self):
        return self.prop.cpu().numpy().copy()


def dcm_continuation(clicks: np.ndarray) -> np.ndarray:
    """λ_r, the probability of going on after a click at rank r, fitted by the dependent click model
    (Guo, Liu & Wang 2009; :class:`ultr_core.clickmodels.models.DCM`, PyClick's counting estimator: a click that is
    not the session's last) on a (sessions × positions) 0/1 click matrix.

    >>> dcm_continuation(np.array([[1, 1, 0], [1, 0, 0]])).round(3).tolist()   # rank 1: (1 + 1)/(2 + 2)
    [0.5, 0.333, 0.5]
    """
    from ultr_core.clickmodels.models import DCM
    from ultr_core.clickmodels.sessions import SessionTable
    c = np.asarray(clicks).astype(bool)
    table = SessionTable(np.zeros(c.shape, np.int64), c, np.ones(len(c)), 1, len(c))
    return DCM().fit(table).cont


def cascade_propensity(clicks: torch.Tensor, lam: torch.Tensor) -> torch.Tensor:
    """ρ_k = Π_{i<k} (1 − c_i (1 − λ_i)): the probability that a DCM user examines rank k given the clicks above
    it (CM-IPS, Vardasbi, de Rijke & Markov, SIGIR 2020).

    >>> rho = cascade_propensity(torch.tensor([[1.0, 0.0, 1.0, 0.0]]), torch.tensor([0.5, 0.5, 0.4, 0.5]))
    >>> rho.double().round(decimals=4).tolist()
    [[1.0, 0.5, 0.5, 0.2]]
    """
    step = 1 - clicks * (1 - lam[None, :clicks.shape[1]])
    return torch.cat([torch.ones_like(step[:, :1]), torch.cumprod(step[:, :-1], dim=1)], dim=1)


class CMIPS(Learner):
    """CM-IPS (Vardasbi, de Rijke & Markov, SIGIR 2020, cascade model-based propensities): each click weighted by
    1/ρ_k, ρ_k = Π_{i<k}(1 − c_i(1 − λ_i)) from the session's own clicks above rank k, with the simulation's λ
    (``propensity="true"`` on a DCM log) or λ fitted by DCM on the training log (:func:`dcm_continuation`; PyClick's
    estimator counts a click that is not the last, which underestimates λ); weights clipped at ``max_weight``, the
    listwise loss of IPS.  Unbiased
    when users follow DCM; under PBM it ignores position bias below the last click."""

    def __init__(self, cfg, n_features, n_positions, context):
        super().__init__(cfg, n_features, n_positions, context)
        data = context.sessions
        lam = self.true_lambda(cfg, context.click_model, n_positions)
        if lam is None:
            lam = dcm_continuation(data.clicks[:, :n_positions])
        self.register_buffer("lam", torch.tensor(lam, dtype=torch.float32))
        rho = cascade_propensity(torch.from_numpy(data.clicks[:, :n_positions]), self.lam).numpy()
        shown = data.shown[:, :n_positions]
        self._mean_rho = (rho * shown).sum(0) / np.maximum(shown.sum(0), 1)

    @staticmethod
    def true_lambda(cfg, click_model: dict, n_positions: int) -> np.ndarray | None:
        """The simulation's own λ_r = γ·(1/r)^η when ``propensity="true"`` and its users follow DCM (as IPS reads the
        true examination curve, and as the official code passes ``--click_gold_dcm_lambdas``), else None (fitted)."""
        from ultr_core.clickmodels.models import DCM
        from ultr_core.clickmodels.registry import MODEL_BY_KEY
        users = MODEL_BY_KEY.get(click_model.get("user_model", ""))
        if cfg.propensity != "true" or users is None or users.cls is not DCM:
            return None
        from ultr_core.simulation.clickmodel import ClickModelConfig
        return ClickModelConfig.from_meta(click_model).continuation_curve(n_positions)

    def loss(self, b):
        c = b.clicks
        w = (1.0 / cascade_propensity(c, self.lam).clamp(min=1e-6)).clamp(max=self.cfg.max_weight or float("inf"))
        objective = listwise_softmax(self.score(b.X), c, b.shown, weights=w)
        return objective, {"loss": float(objective.detach())}

    def observation(self):
        """The mean propensity ρ per position over the training sessions (ρ itself differs per session)."""
        return self._mean_rho.copy()


class DLA(Learner):
    """Dual Learning Algorithm (Ai et al., SIGIR 2018, eq. 5–8): a ranking tower f(x) and a
    propensity tower g(p) (one logit per position), each trained with the listwise softmax
    loss; the ranker's clicks weighted by ô_1/ô_p and the propensity tower's by r̂_1/r̂_p,
    both computed without gradient and clipped at ``max_weight``."""

    def __init__(self, cfg, n_features, n_positions, context):
        super().__init__(cfg, n_features, n_positions, context)
        self.g = nn.Parameter(torch.zeros(n_positions))

    def loss(self, b):
        X, c, m = b.X, b.clicks, b.shown
        L = X.shape[1]
        s = self.score(X)
        g = self.g[:L].expand_as(s)
        w_rank, w_prop = self.weights(s, g, m)
        l_rank = listwise_softmax(s, c, m, weights=w_rank)
        l_prop = listwise_softmax(g, c, m, weights=w_prop)
        return l_rank + l_prop, {"loss": float(l_rank.detach()), "propensity_loss": float(l_prop.detach())}

    def weights(self, s, g, m):
        """(ô_1/ô_p, r̂_1/r̂_p) per list entry, computed without gradient and clipped."""
        with torch.no_grad():
            o = torch.softmax(g.masked_fill(~m, NEG), dim=1)
            r = torch.softmax(s.masked_fill(~m, NEG), dim=1)
            cap = self.cfg.max_weight if self.cfg.max_weight is not None else float("inf")
            w_rank = (o[:, :1] / o.clamp(min=1e-9)).clamp(max=cap)
            w_prop = (r[:, :1] / r.clamp(min=1e-9)).clamp(max=cap)
        return w_rank, w_prop

    def observation(self):
        o = torch.softmax(self.g.detach(), 0).cpu().numpy()
        with np.errstate(divide="ignore", invalid="ignore"):       # a diverged fit: NaN, reported by the caller
            return o / o[0]


class RegressionEM(Learner):
    """Regression-EM (Wang et al., WSDM 2018): E-step P(R=1|C=0) = (1−o)r/(1−or),
    P(E=1|C=0) = o(1−r)/(1−or); the ranker σ(f(x)) fits the relevance posterior with binary
    cross-entropy and the M-step moves o_p towards the batch mean of the examination
    posterior (running mean, step ``em_step``)."""

    needs_clicks = False

    def __init__(self, cfg, n_features, n_positions, context):
        super().__init__(cfg, n_features, n_positions, context)
        self.register_buffer("o", torch.full((n_positions,), 0.5))

    def loss(self, b):
        X, c, m = b.X, b.clicks, b.shown
        L = X.shape[1]
        logit = self.score(X)
        with torch.no_grad():
            r = torch.sigmoid(logit)
            o = self.o[:L].expand_as(r)
            denom = (1 - o * r).clamp(min=1e-6)
            post_r = c + (1 - c) * (1 - o) * r / denom
            post_e = c + (1 - c) * o * (1 - r) / denom
            mf = m.float()
            batch_o = (post_e * mf).sum(0) / mf.sum(0).clamp(min=1)
            seen = mf.sum(0) > 0
            self.o[:L] = torch.where(seen, (1 - self.cfg.em_step) * self.o[:L] + self.cfg.em_step * batch_o,
                                     self.o[:L])
        objective = (F.binary_cross_entropy_with_logits(logit, post_r, reduction="none") * m).sum() / m.sum()
        return objective, {"loss": float(objective.detach())}

    def observation(self):
        o = self.o.cpu().numpy().copy()
        return o / max(o[0], 1e-9)


class TwoTower(Learner):
    """Two-Tower additive model (Guo et al. 2019 style; SPEC §3): ĉ = σ(f(x))·σ(g(p)),
    binary cross-entropy on clicks of shown documents."""

    needs_clicks = False

    def __init__(self, cfg, n_features, n_positions, context):
        super().__init__(cfg, n_features, n_positions, context)
        self.g = nn.Parameter(torch.zeros(n_positions))

    def loss(self, b):
        X, c, m = b.X, b.clicks, b.shown
        L = X.shape[1]
        log_c = F.logsigmoid(self.score(X)) + F.logsigmoid(self.g[:L])[None, :]
        p = log_c.exp().clamp(1e-6, 1 - 1e-6)
        objective = (F.binary_cross_entropy(p, c, reduction="none") * m).sum() / m.sum()
        return objective, {"loss": float(objective.detach())}

    def observation(self):
        o = torch.sigmoid(self.g.detach()).cpu().numpy()
        return o / o[0]


class PairDebias(Learner):
    """Pairwise debiasing (Hu et al., WWW 2019, Unbiased LambdaMART's idea) with a logistic
    pairwise loss: each (clicked i, unclicked j) pair of a list is weighted by 1/(t⁺_{p_i} t⁻_{p_j});
    t⁺ and t⁻ follow the paper's closed form t⁺_p ∝ (Σ_{pairs with i at p} ℓ_ij / t⁻_{p_j})^{1/2}
    (and symmetrically), normalised at position 1 and smoothed across batches.  The loss is a
    sum over each list's pairs averaged over lists — no batch × batch broadcasting."""

    def __init__(self, cfg, n_features, n_positions, context):
        super().__init__(cfg, n_features, n_positions, context)
        self.register_buffer("t_plus", torch.ones(n_positions))
        self.register_buffer("t_minus", torch.ones(n_positions))

    def loss(self, b):
        X, c, m = b.X, b.clicks, b.shown
        L = X.shape[1]
        s = self.score(X)
        pair = (c[:, :, None] > 0.5) & (c[:, None, :] < 0.5) & m[:, :, None] & m[:, None, :]
        lij = F.softplus(-(s[:, :, None] - s[:, None, :]))                       # (B, L, L)
        tp, tm = self.t_plus[:L], self.t_minus[:L]
        w = (1.0 / (tp[:, None] * tm[None, :])).clamp(max=self.cfg.max_weight or float("inf"))
        objective = (lij * w[None] * pair).sum() / max(len(X), 1)
        with torch.no_grad():
            lp = lij * pair
            num_p = (lp / tm[None, None, :]).sum(dim=(0, 2))
            num_m = (lp / tp[None, :, None]).sum(dim=(0, 1))
            for t, num in ((self.t_plus, num_p), (self.t_minus, num_m)):
                ok = num > 0
                if ok[0]:
                    new = torch.where(ok, (num / num[0]).sqrt(), t[:L])
                    t[:L] = 0.9 * t[:L] + 0.1 * new
        return objective, {"loss": float(objective.detach())}

    def observation(self):
        o = self.t_plus.cpu().numpy().copy()
        return o / o[0]
