"""The learning algorithms.  Each is a small class with one job: its loss on a batch.

Shared pieces: :func:`listwise_softmax` (the softmax cross-entropy list loss of ULTRA,
DLA and LBD) and the :class:`Learner` base (ranking model, optimiser parameter groups,
observation estimate).  The training loop (``training.py``) builds the optimiser once.

Batches hold ``X`` (B, L, F) features, ``shown`` (B, L), ``clicks`` (B, L) and, when the log
has it, ``labels`` (B, L) true grades (Oracle only).
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..simulation import position_observation
from .config import TrainConfig, lbd_table3
from .models import ranker

NEG = -1e9


def listwise_softmax(logits, targets, mask, weights=None):
    """Mean over lists with a positive target of −Σ_i w_i t_i log softmax(logits)_i
    (masked entries excluded from the softmax)."""
    logp = torch.log_softmax(logits.masked_fill(~mask, NEG), dim=1)
    t = targets * mask
    if weights is not None:
        t = t * weights
    per_list = -(t * logp).sum(dim=1)
    has = (targets * mask).sum(dim=1) > 0
    return per_list[has].sum() / has.sum().clamp(min=1)


class Learner(nn.Module):
    """Base: a ranking model ``f`` scoring features; subclasses add observation models."""

    uses_labels = False           #: trains on true labels (Oracle)
    needs_clicks = True           #: sessions without clicks carry no signal for its loss

    def __init__(self, cfg: TrainConfig, n_features: int, n_positions: int, context: dict):
        super().__init__()
        self.cfg, self.n_positions, self.context = cfg, n_positions, context
        self.f = ranker(cfg, n_features)

    def score(self, X):
        return self.f(X).squeeze(-1)

    def loss(self, b: dict) -> tuple[torch.Tensor, dict]:
        raise NotImplementedError

    def observation(self) -> np.ndarray | None:
        """Current estimate of the observation curve per position (None if the method has none)."""
        return None

    def tau_weights(self, b):
        """HTE click weights 1/τ (clipped at ``max_weight``) when the batch carries ``tau``, else None."""
        if "tau" not in b:
            return None
        return (1.0 / b["tau"].clamp(min=1e-6)).clamp(max=self.cfg.max_weight or float("inf"))


class Naive(Learner):
    """"Click Data": listwise softmax cross-entropy on raw clicks (no debiasing)."""

    def loss(self, b):
        l = listwise_softmax(self.score(b["X"]), b["clicks"], b["shown"])
        return l, {"loss": float(l.detach())}


class Oracle(Learner):
    """"Labeled Data": the same listwise loss on true gains 2^y − 1 (an upper bound)."""

    uses_labels = True
    needs_clicks = False

    def loss(self, b):
        gains = 2.0 ** b["labels"] - 1
        l = listwise_softmax(self.score(b["X"]), gains, b["shown"])
        return l, {"loss": float(l.detach())}


class IPS(Learner):
    """Inverse propensity scoring (Joachims et al., WSDM 2017; Wang et al. 2016): clicks in the
    listwise loss weighted by ô_1/ô_p with known propensities (the log's true curve) or a
    misspecified assumption o_p = v_p^η′ (``ips_eta``, CLD's RQ4); weights clipped at ``max_weight``."""

    def __init__(self, cfg, n_features, n_positions, context):
        super().__init__(cfg, n_features, n_positions, context)
        if cfg.ips_eta is None:
            o = context.get("true_propensity")
            if o is None:
                raise ValueError("IPS with true propensities needs a simulated log; set ips_eta")
        else:
            o = position_observation(n_positions, cfg.ips_eta, context.get("convention", "eye_tracking"))
        o = np.maximum(np.asarray(o, np.float64)[:n_positions], 1e-6)
        self.register_buffer("prop", torch.tensor(o / o[0], dtype=torch.float32))

    def loss(self, b):
        L = b["X"].shape[1]
        w = (1.0 / self.prop[:L]).clamp(max=self.cfg.max_weight or float("inf"))
        l = listwise_softmax(self.score(b["X"]), b["clicks"], b["shown"], w[None, :])
        return l, {"loss": float(l.detach())}

    def observation(self):
        return self.prop.cpu().numpy().copy()


class DLA(Learner):
    """Dual Learning Algorithm (Ai et al., SIGIR 2018, eq. 5–8): a ranking tower f(x) and a
    propensity tower g(p) (one logit per position), each trained with the listwise softmax
    loss; the ranker's clicks weighted by ô_1/ô_p and the propensity tower's by r̂_1/r̂_p,
    both computed without gradient and clipped at ``max_weight``."""

    def __init__(self, cfg, n_features, n_positions, context):
        super().__init__(cfg, n_features, n_positions, context)
        self.g = nn.Parameter(torch.zeros(n_positions))

    def loss(self, b):
        X, c, m = b["X"], b["clicks"], b["shown"]
        L = X.shape[1]
        s = self.score(X)
        g = self.g[:L].expand_as(s)
        w_rank, w_prop = self.weights(s, g, m)
        l_rank = listwise_softmax(s, c, m, w_rank)
        l_prop = listwise_softmax(g, c, m, w_prop)
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
        X, c, m = b["X"], b["clicks"], b["shown"]
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
        l = (F.binary_cross_entropy_with_logits(logit, post_r, reduction="none") * m).sum() / m.sum()
        return l, {"loss": float(l.detach())}

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
        X, c, m = b["X"], b["clicks"], b["shown"]
        L = X.shape[1]
        log_c = F.logsigmoid(self.score(X)) + F.logsigmoid(self.g[:L])[None, :]
        p = log_c.exp().clamp(1e-6, 1 - 1e-6)
        l = (F.binary_cross_entropy(p, c, reduction="none") * m).sum() / m.sum()
        return l, {"loss": float(l.detach())}

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
        X, c, m = b["X"], b["clicks"], b["shown"]
        L = X.shape[1]
        s = self.score(X)
        pair = (c[:, :, None] > 0.5) & (c[:, None, :] < 0.5) & m[:, :, None] & m[:, None, :]
        lij = F.softplus(-(s[:, :, None] - s[:, None, :]))                       # (B, L, L)
        tp, tm = self.t_plus[:L], self.t_minus[:L]
        w = (1.0 / (tp[:, None] * tm[None, :])).clamp(max=self.cfg.max_weight or float("inf"))
        l = (lij * w[None] * pair).sum() / max(len(X), 1)
        with torch.no_grad():
            lp = lij * pair
            num_p = (lp / tm[None, None, :]).sum(dim=(0, 2))
            num_m = (lp / tp[None, :, None]).sum(dim=(0, 1))
            for t, num in ((self.t_plus, num_p), (self.t_minus, num_m)):
                ok = num > 0
                if ok[0]:
                    new = torch.where(ok, (num / num[0]).sqrt(), t[:L])
                    t[:L] = 0.9 * t[:L] + 0.1 * new
        return l, {"loss": float(l.detach())}

    def observation(self):
        o = self.t_plus.cpu().numpy().copy()
        return o / o[0]


class LBD(Learner):
    """Lipschitz & Bernoulli Decoupling (Chen et al., NeurIPS 2022, §5, eq. 2).

    One network outputs a relevance logit s(x) and n observation logits h_p(x), one per position
    head.  Two forms, ``lbd_penalty``:

    ``"official"`` (default; ``ultra/learning_algorithm/lbd.py`` of the official code):
        click logit ``s(x) + γ·h_p(x)`` (the raw observation logit added; Bernoulli decoupling
        γ ~ Bernoulli(1 − t) per document zeroes it) in the listwise softmax loss; penalty
        ``λ·‖∇_X mean(dropout_k(H))‖²₂`` — the squared L2 norm, over all features of the batch, of
        the gradient of the batch mean of the raw logits H of **all** position heads of every
        shown document after dropout with keep probability k = ``lbd_dropout_keep`` (0.1, as TF1's
        ``tf.nn.dropout(x, 0.1)``; kept entries scaled by 1/k).
    ``"paper"`` (the paper's text, §5):
        ``log ĉ_p = log r̂ + γ·log ô_p(x)`` with ``ô_p = σ(h_p)``; penalty
        ``λ·Σ_i ‖∇_x ô_{p_i}(x_i)‖₂`` (un-squared, per document, at the position it was shown).

    Ranking uses s(x) only.  Ablations: LBD_Lips (t = 0), LBD_Ber (λ = 0), Unlimited (both 0).
    """

    def __init__(self, cfg, n_features, n_positions, context, lam=None, t=None):
        super().__init__(cfg, n_features, n_positions, context)
        self.f = ranker(cfg, n_features, 1 + n_positions)
        paper_lam, paper_t = lbd_table3(context.get("click_model", {}).get("coupling", 0.0), cfg.model)
        self.lam = (paper_lam if cfg.lbd_lambda is None else cfg.lbd_lambda) if lam is None else lam
        self.t = (paper_t if cfg.lbd_t is None else cfg.lbd_t) if t is None else t
        self.official = cfg.lbd_penalty == "official"
        self.keep = cfg.lbd_dropout_keep
        self.generator = context["generator"]
        self._obs = np.ones(n_positions)

    def score(self, X):
        return self.f(X)[..., 0]

    def penalty(self, X, h_all, h_disp, m):
        """The gradient penalty (without λ) of a batch; ``X`` must require grad."""
        mf = m.float()
        if self.official:
            H = h_all * mf[..., None]
            if self.keep < 1:
                keep = (torch.rand(H.shape, generator=self.generator, dtype=H.dtype) < self.keep).to(H)
                H = H * keep / self.keep
            target = H.sum() / (mf.sum() * h_all.shape[-1]).clamp(min=1)
            grad, = torch.autograd.grad(target, X, create_graph=True)
            return (grad ** 2).sum()
        grad, = torch.autograd.grad((torch.sigmoid(h_disp) * mf).sum(), X, create_graph=True)
        return (grad.norm(dim=-1) * mf).sum() / len(X)

    def loss(self, b):
        X, c, m = b["X"], b["clicks"], b["shown"]
        B, L, _ = X.shape
        X = X.clone().requires_grad_(self.lam > 0)
        out = self.f(X)
        log_r = out[..., 0]
        h_all = out[..., 1:1 + L]                                           # (B, L, L): doc × position head
        idx = torch.arange(L, device=X.device)
        h_disp = h_all[:, idx, idx]                                         # the head of the shown position
        log_o = h_disp if self.official else F.logsigmoid(h_disp)
        gamma = (torch.rand(B, L, generator=self.generator) >= self.t).to(log_r)
        w = self.tau_weights(b)
        l_sv = listwise_softmax(log_r + gamma * log_o, c, m, w)
        parts = {"loss": float(l_sv.detach())}
        total = l_sv
        if self.lam > 0:
            gp = self.penalty(X, h_all, h_disp, m)
            total = total + self.lam * gp
            parts["gradient_penalty"] = float(gp.detach())
        with torch.no_grad():
            o_each = torch.exp(h_disp - h_disp.max()) if self.official else torch.sigmoid(h_disp)
            o = ((o_each * m).sum(0) / m.sum(0).clamp(min=1)).cpu().numpy()
            seen = (m.sum(0) > 0).cpu().numpy()
            if seen[0] and o[0] > 0:                # ratios to position 1 (scale-free across batches)
                o = o / o[0]
                self._obs[:L][seen] = 0.9 * self._obs[:L][seen] + 0.1 * o[seen]
        return total, parts

    def observation(self):
        return self._obs / max(self._obs[0], 1e-12)


class Vectorization(Learner):
    """Vectorization (Chen, Liu, Liu & Sun, KDD 2022, "Scalar is Not Enough"; LBD's Table 1 baseline).

    Relevance is a vector ``r(x) ∈ R^d`` (the ranker's d outputs) and observation a vector
    ``o_p ∈ R^d`` per position (initialised to ones, frozen for the first ``vec_freeze`` steps so
    the ranker settles first); the click logit is ``⟨r(x), o_p⟩`` in the listwise softmax loss.  To
    rank, relevance is projected on a per-query **base vector** ``b(q)``: a density model maps
    features to a Gaussian ``N(μ(x), diag σ²(x))`` (μ = 1 + network output) fitted to the observation vector of the position
    each document was shown at (loss ``mean((μ − o_p)²/σ²) + mean(log σ²)`` + 0.001·L2 of its
    kernels, trained after ``vec_freeze`` steps), and ``b(q) = Σ_i μ(x_i)/σ²(x_i) / Σ_i 1/σ²(x_i)``
    over the query's documents; score ``⟨r(x), b(q)⟩``.  Written from the paper's description;
    the differences from the official code are in docs/conventions.md.
    """

    def __init__(self, cfg, n_features, n_positions, context):
        super().__init__(cfg, n_features, n_positions, context)
        d = cfg.vec_dim
        self.f = ranker(cfg, n_features, d)
        self.o = nn.Parameter(torch.ones(n_positions, d))
        self.density = nn.Sequential(nn.Linear(n_features, 256), nn.ELU(), nn.Linear(256, 64), nn.ELU(),
                                     nn.Linear(64, 2 * d))
        self.steps_done = 0

    def _density(self, X):
        out = self.density(X.detach())
        d = self.cfg.vec_dim
        # μ = 1 + net(x): the base vector starts at the observation vectors' initial value (ones),
        # so short runs rank by ⟨r, 1⟩ — the logit they trained — until the density model has fitted
        return 1.0 + out[..., :d], out[..., d:].clamp(-10, 10)

    def base_vector(self, X, mask):
        """Precision-weighted mean of μ(x) over each list's documents: (B, d)."""
        mu, log_var = self._density(X)
        w = torch.exp(-log_var) * mask[..., None]
        return (mu * w).sum(1) / w.sum(1).clamp(min=1e-9)

    def score(self, X):
        """Scores for one list (X: (L, F)) or a batch of lists (X: (B, L, F))."""
        r = self.f(X)
        if X.dim() == 2:
            b = self.base_vector(X[None], torch.ones(1, len(X), dtype=torch.bool, device=X.device))[0]
            return (r * b).sum(-1)
        b = self.base_vector(X, torch.ones(X.shape[:2], dtype=torch.bool, device=X.device))
        return (r * b[:, None, :]).sum(-1)

    def predict_lists(self, X, offsets):
        """⟨r(x), b(q)⟩ with the base vector of each query's list (``offsets``: query boundaries)."""
        dev = self.o.device
        X = torch.as_tensor(np.asarray(X, np.float32), device=dev)
        offsets = np.array([0, len(X)]) if offsets is None else np.asarray(offsets)
        q = torch.from_numpy(np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))).to(dev)
        with torch.no_grad():
            r = self.f(X)
            mu, log_var = self._density(X)
            w = torch.exp(-log_var)
            nq, d = len(offsets) - 1, self.cfg.vec_dim
            num = torch.zeros(nq, d, device=dev).index_add_(0, q, mu * w)
            den = torch.zeros(nq, d, device=dev).index_add_(0, q, w)
            b = num / den.clamp(min=1e-9)
            return (r * b[q]).sum(-1).cpu().numpy().astype(np.float64)

    def loss(self, b):
        X, c, m = b["X"], b["clicks"], b["shown"]
        L = X.shape[1]
        frozen = self.steps_done < self.cfg.vec_freeze
        self.steps_done += 1
        o = self.o[:L].detach() if frozen else self.o[:L]
        logits = (self.f(X) * o[None]).sum(-1)
        l_click = listwise_softmax(logits, c, m)
        parts = {"loss": float(l_click.detach())}
        total = l_click
        if not frozen:
            mu, log_var = self._density(X)
            mf = m.float()[..., None]
            n = (mf.sum() * self.cfg.vec_dim).clamp(min=1)
            fit = (((mu - self.o[:L].detach()[None]) ** 2) * torch.exp(-log_var) * mf).sum() / n
            spread = (log_var * mf).sum() / n
            l2 = 0.001 * sum(0.5 * (layer.weight ** 2).sum() for layer in self.density if isinstance(layer, nn.Linear))
            total = total + fit + spread + l2
            parts["density_loss"] = float((fit + spread).detach())
        return total, parts

    def observation(self):
        """None: observation is a vector per position here, with no scalar curve to compare."""
        return None


class HTE(Learner):
    """HTE debiasing (LBD §6.3, Fig. 3c; Tian et al.'s intervention design): the listwise softmax
    loss on clicks weighted by 1/τ̂_k(x), τ̂ estimated by a T-learner on a simulated intervention
    log (:func:`ultr_core.hte.estimate_tau`); ``hte_oracle`` uses the true o_k(x)/o_1(x)."""

    tau_kind = "estimated"

    def loss(self, b):
        l = listwise_softmax(self.score(b["X"]), b["clicks"], b["shown"], self.tau_weights(b))
        return l, {"loss": float(l.detach())}


class HTEOracle(HTE):
    """HTE-oracle: clicks weighted by the simulator's true 1/τ_k(x) = o_1(x)/o_k(x) (upper bound of HTE)."""

    tau_kind = "oracle"


class LBDHTEOracle(LBD):
    """LBD-HTE-oracle: LBD trained on the clicks corrected with the true 1/τ_k(x) (LBD §6.3)."""

    tau_kind = "oracle"


def _lbd_variant(lam, t, doc):
    class Variant(LBD):
        __doc__ = doc

        def __init__(self, cfg, n_features, n_positions, context):
            super().__init__(cfg, n_features, n_positions, context, lam=lam, t=t)
    return Variant


LEARNERS = {
    "naive": Naive, "oracle": Oracle, "ips": IPS, "dla": DLA, "regression_em": RegressionEM,
    "two_tower": TwoTower, "pair_debias": PairDebias, "lbd": LBD, "vectorization": Vectorization,
    "hte": HTE, "hte_oracle": HTEOracle, "lbd_hte_oracle": LBDHTEOracle,
    "lbd_lips": _lbd_variant(None, 0.0, "LBD_Lips: LBD with t = 0 (gradient penalty only)."),
    "lbd_ber": _lbd_variant(0.0, None, "LBD_Ber: LBD with λ = 0 (Bernoulli decoupling only)."),
    "unlimited": _lbd_variant(0.0, 0.0, "Unlimited: LBD with λ = 0 and t = 0."),
}
